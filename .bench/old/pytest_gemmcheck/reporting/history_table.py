"""The tables of ``gemmcheck history``: a line per case, with its rate's two-sided interval, its
worst launch, when it was last bad, a trend over its last runs and the worst verdict of its
latest run (two tests of one case in one run never hide a regression behind the other's pass).
With ``--case``, that case's runs, newest first: the table of a bug report. And ``gemmcheck
runs``'s table, a line per run.

A table that holds a collective case has a ``ranks`` column (the collective, its world size and
the ranks with bad launches), and its records the fields ``collective``, ``world_size`` and
``ranks``; a table without one reads as it always did."""

from __future__ import annotations

from collections import defaultdict

from ..history.dashboard import VERDICT_ORDER, case_runs, case_totals, rank_totals, recent_results, sanitize_of
from ..history.dashboard import runs as run_rows
from ..history.selection import NO_GPU_ARCH, Selection
from ..judging.stats import format_interval, rate_interval
from .tables import Table, params_text

TREND_RUNS = 12
_BARS = "▂▃▄▅▆▇█"  # a run's bad-launch rate, low to high; a clean run is ▁


def trend_glyph(bad: int, launches: int) -> str:
    if not launches or not bad:
        return "▁"
    return _BARS[min(len(_BARS) - 1, int(bad / launches * len(_BARS)))]


def when(moment) -> str:
    return moment.strftime("%Y-%m-%d %H:%M") if moment is not None else "-"


def worst_verdict(verdicts) -> str:
    known = [verdict for verdict in verdicts if verdict in VERDICT_ORDER]
    return min(known, key=VERDICT_ORDER.index) if known else ""


def ranks_text(ranks: dict[int, list[int]], most: int = 3) -> str:
    """The ranks with bad launches, the worst first: 'rank 3 5/600, rank 1 1/600'; 'no rank bad'."""
    bad = sorted(
        ((rank, counts) for rank, counts in ranks.items() if counts[0]), key=lambda item: (-item[1][0], item[0])
    )
    if not bad:
        return "no rank bad"
    shown = ", ".join(f"rank {rank} {counts[0]}/{counts[1]}" for rank, counts in bad[:most])
    return shown + (", ..." if len(bad) > most else "")


def ranks_cell(collective: str | None, world_size: int | None, ranks: dict[int, list[int]] | None) -> str:
    """'all_reduce x4: rank 3 5/600'; '-' for a case that is no collective one."""
    if not collective:
        return "-"
    return f"{collective} x{world_size}: {ranks_text(ranks or {})}"


def ranks_record(ranks: dict[int, list[int]] | None) -> dict[str, dict[str, int]] | None:
    """Each rank's counts as data: {'3': {'launches': 600, 'bad_launches': 5}}."""
    if ranks is None:
        return None
    return {str(rank): {"launches": launches, "bad_launches": bad} for rank, (bad, launches) in sorted(ranks.items())}


def history_table(engine, selection: Selection, *, limit: int = 500) -> Table:
    totals, cases = case_totals(engine, selection, limit=limit)
    collective = [case_id for case_id, case in cases.items() if case.collective]  # the table gets a ranks column
    per_rank = rank_totals(engine, selection, collective) if collective else {}
    recent = recent_results(engine, selection, [t.case_id for t in totals], runs=TREND_RUNS)
    per_run: dict[int, dict[int, list]] = defaultdict(dict)  # case -> run -> [bad, launches, verdicts, deterministic]
    for row in recent:
        entry = per_run[row.case_id].setdefault(row.run_id, [0, 0, [], set()])
        entry[0] += row.bad_launches
        entry[1] += row.launches
        entry[2].append(row.verdict)
        entry[3].add(row.deterministic)
    rows, records = [], []
    for total in totals:
        case = cases[total.case_id]
        runs = per_run.get(total.case_id, {})
        ordered = [runs[run_id] for run_id in sorted(runs)]  # oldest first
        latest = ordered[-1] if ordered else [0, 0, [], set()]
        verdict = worst_verdict(latest[2])
        mixed = len(latest[2]) > 1 and len(latest[3]) > 1  # one test declared it nondeterministic, another did not
        low, high = rate_interval(total.bad_launches, total.launches)
        trend = "".join(trend_glyph(bad, launches) for bad, launches, _, _ in ordered)
        row = [
            case.key[:10],
            case.kernel,
            case.quant,
            case.shape,
            case.tile or "",
            params_text(case.params),
            str(total.runs),
            f"{total.bad_launches}/{total.launches}",
            format_interval(low, high),
            f"{total.worst_wrong:,}",
            count_or_dash(total.worst_differing),
            count_or_dash(total.hazards),
            when(total.last_bad_at),
            trend,
            verdict + (" (mixed checks)" if mixed else ""),
        ]
        ranks = per_rank.get(total.case_id, {}) if case.collective else None
        if collective:
            row.insert(RANKS_COLUMN, ranks_cell(case.collective, case.world_size, ranks))
        rows.append(row)
        records.append(
            {
                **case_record(case, collective=bool(collective)),
                **({"ranks": ranks_record(ranks)} if collective else {}),
                "runs": total.runs,
                "launches": total.launches,
                "bad_launches": total.bad_launches,
                "rate_low": low,
                "rate_high": high,
                "worst_wrong": total.worst_wrong,
                "worst_differing": total.worst_differing,
                "hazards": total.hazards,
                "last_bad": total.last_bad_at,
                "trend": [[bad, launches] for bad, launches, _, _ in ordered],
                "verdict": verdict,
                "mixed_checks": mixed,
            }
        )
    notes = []
    if rows:
        notes.append(
            "rate: two-sided 95% Clopper-Pearson interval of bad/launches; worst: the worst launch's wrong "
            "elements, differing: its elements off the consensus of the launches; hazards: the most "
            "error-severity compute-sanitizer reports of one result (- never sanitized); latest verdict: "
            "the worst of the case's results in its latest run"
            + (
                " (mixed checks: one of its tests checked consistency, another declared the kernel nondeterministic)"
                if any(record["mixed_checks"] for record in records)
                else ""
            )
        )
    headers = [
        "case",
        "kernel",
        "quant",
        "shape",
        "tile",
        "params",
        "runs",
        "bad",
        "rate (95%)",
        "worst",
        "differing",
        "hazards",
        "last bad",
        f"last {TREND_RUNS} runs",
        "latest verdict",
    ]
    if collective:
        headers.insert(RANKS_COLUMN, "ranks")
        notes.append(
            "ranks: a collective case's collective and world size, and its ranks with bad launches (the "
            "worst first); its launches are counted on every rank"
        )
    return Table(headers, rows, records=records, notes=notes, empty="no recorded cases match")


RANKS_COLUMN = 6  # after the case's params: the ranks are part of what the case is


def count_or_dash(count: int | None) -> str:
    """A count, or '-' where none was recorded (a result older than the figure, never sanitized)."""
    return "-" if count is None else f"{count:,}"


def case_record(case, *, collective: bool = False) -> dict:
    """A case as the machine forms give it: its key and every part of it, as values;
    ``collective``: with its collective and world size (a table that holds a collective case)."""
    record = {
        "key": case.key,
        "kernel": case.kernel,
        "quant": case.quant,
        "m": case.m,
        "n": case.n,
        "k": case.k,
        "shape": case.shape,
        "tile": case.tile,
        "out_dtype": case.out_dtype,
        "fp8": case.fp8,
        "params": case.params,
    }
    if collective:
        record.update(collective=case.collective, world_size=case.world_size)
    return record


def sanitizer_words(runs: list[dict]) -> str:
    """A result's compute-sanitizer runs in a few words: 'racecheck hazard, memcheck clean',
    'racecheck skipped'."""
    from ..records.sanitize import SanitizedLaunch

    words = []
    for data in runs:
        run = SanitizedLaunch.from_dict(data)
        state = "hazard" if run.has_hazard else ({"ran": "clean", "timed_out": "timed out"}.get(run.status, run.status))
        if run.status == "ran" and not run.has_hazard and run.warnings:
            state = f"{run.warnings:,} warning{'s' if run.warnings != 1 else ''}"
        words.append(f"{run.tool} {state}")
    return ", ".join(words)


def case_runs_table(engine, selection: Selection, *, limit: int = 50) -> Table:
    """The selected cases' runs, newest first; the case column tells apart the cases a key
    prefix matched."""
    from ..records.sanitize import SanitizedLaunch

    rows, records = [], []
    found = case_runs(engine, selection, limit=limit)
    sanitized = sanitize_of(engine, [result.id for result, _, _ in found])
    collective = any(result.per_rank is not None for result, _, _ in found)
    for result, arch, key in found:
        low, high = rate_interval(result.bad_launches, result.launches)
        runs = sanitized.get(result.id, [])
        rows.append(
            [
                key[:10],
                str(result.run_id),
                when(result.started_at),
                result.status,
                result.tag or "",
                (result.revision or "")[:10],
                arch or NO_GPU_ARCH,
                f"{result.bad_launches}/{result.launches}",
                format_interval(low, high),
                f"{result.worst_wrong:,}",
                count_or_dash(result.worst_differing),
                sanitizer_words(runs) or "-",
                result.verdict,
                result.kinds,
            ]
        )
        if collective:
            rows[-1].insert(RUN_RANKS_COLUMN, run_ranks_cell(result.per_rank))
        records.append(
            {
                "key": key,
                "run_id": result.run_id,
                "started_at": result.started_at,
                "status": result.status,
                "tag": result.tag,
                "revision": result.revision,
                "gpu_arch": arch or NO_GPU_ARCH,
                "launches": result.launches,
                "bad_launches": result.bad_launches,
                "rate_low": low,
                "rate_high": high,
                "worst_wrong": result.worst_wrong,
                "worst_differing": result.worst_differing,
                "hazards": result.hazards,
                "sanitize": [
                    {"tool": run.tool, "status": run.status, "hazard": run.has_hazard, "summary": run.summary()}
                    for run in map(SanitizedLaunch.from_dict, runs)
                ],
                "verdict": result.verdict,
                "kinds": [kind for kind in result.kinds.split(",") if kind],
            }
        )
        if collective:
            records[-1]["ranks"] = result.per_rank
    headers = [
        "case",
        "run",
        "started",
        "status",
        "tag",
        "revision",
        "arch",
        "bad",
        "rate (95%)",
        "worst",
        "differing",
        "sanitizer",
        "verdict",
        "kinds",
    ]
    notes = []
    if collective:
        headers.insert(RUN_RANKS_COLUMN, "ranks")
        notes.append("ranks: a collective case's ranks with bad launches, each with its GPU")
    return Table(headers, rows, records=records, notes=notes, empty="no recorded runs of that case")


RUN_RANKS_COLUMN = 8  # beside the run's bad launches


def gpu_text(device: str | None, uuid: str | None) -> str:
    """A rank's GPU in a cell: its UUID cut to 12 characters (which tells GPUs of several hosts
    apart), else its torch device; '' when neither was recorded."""
    if uuid:
        return uuid if len(uuid) <= 12 else uuid[:12] + "…"
    return device or ""


def run_ranks_cell(stored: list[dict] | None) -> str:
    """A result's ranks: 'rank 3 2/200 on GPU-1eff2c9a…' (the bad ones, each with its GPU),
    '4 ranks, none bad'; '-' for a result that is no collective case's."""
    if stored is None:
        return "-"
    bad = [entry for entry in stored if entry.get("bad_launches")]
    if not bad:
        return f"{len(stored)} rank{'s' if len(stored) != 1 else ''}, none bad"
    words = []
    for entry in bad:
        gpu = gpu_text(entry.get("device"), entry.get("device_uuid"))
        words.append(
            f"rank {entry['rank']} {entry['bad_launches']}/{entry['launches']}" + (f" on {gpu}" if gpu else "")
        )
    return ", ".join(words)


def runs_table(engine, selection: Selection, *, limit: int = 20) -> Table:
    """The selected runs, newest first, with their results and bad launches."""
    found = run_rows(engine, selection, limit=limit)
    rows = [
        [
            str(r.id),
            when(r.started_at),
            when(r.ended_at),
            r.status,
            r.tag or "",
            (r.revision or "")[:10] + ("+" if r.dirty else ""),
            str(r.results),
            f"{r.bad_launches}/{r.launches}",
        ]
        for r in found
    ]
    records = [
        {
            "id": r.id,
            "started_at": r.started_at,
            "ended_at": r.ended_at,
            "status": r.status,
            "tag": r.tag,
            "revision": r.revision,
            "dirty": r.dirty,
            "results": r.results,
            "launches": r.launches,
            "bad_launches": r.bad_launches,
        }
        for r in found
    ]
    return Table(
        ["run", "started", "ended", "status", "tag", "revision", "results", "bad launches"],
        rows,
        records=records,
        empty="no recorded runs match",
    )
