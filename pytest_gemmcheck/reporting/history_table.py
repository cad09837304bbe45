"""``gemmcheck history``: a line per case, with its rate's two-sided interval, its worst launch,
when it was last bad, a trend over its last runs and the worst verdict of its latest run (two
tests of one case in one run never hide a regression behind the other's pass). With
``--case``, that case's runs, newest first: the table of a bug report."""

from __future__ import annotations

from collections import defaultdict

from ..history.dashboard import VERDICT_ORDER, case_runs, case_totals, recent_results
from ..history.selection import Selection
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


def history_table(engine, selection: Selection, *, limit: int = 500) -> Table:
    totals, cases = case_totals(engine, selection, limit=limit)
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
        rows.append([case.key[:10], case.kernel, case.quant, case.shape, case.tile or "", params_text(case.params),
                     str(total.runs), f"{total.bad_launches}/{total.launches}", format_interval(low, high),
                     f"{total.worst_wrong:,}", when(total.last_bad_at), trend,
                     verdict + (" (mixed checks)" if mixed else "")])
        records.append({"key": case.key, "kernel": case.kernel, "quant": case.quant, "shape": case.shape,
                        "tile": case.tile, "params": case.params, "runs": total.runs, "launches": total.launches,
                        "bad_launches": total.bad_launches, "rate_low": low, "rate_high": high,
                        "worst_wrong": total.worst_wrong, "last_bad": total.last_bad_at,
                        "trend": [[bad, launches] for bad, launches, _, _ in ordered], "verdict": verdict,
                        "mixed_checks": mixed})
    return Table(["case", "kernel", "quant", "shape", "tile", "params", "runs", "bad", "rate (95%)", "worst",
                  "last bad", f"last {TREND_RUNS} runs", "latest verdict"], rows, records=records,
                 notes=["rate: two-sided 95% Clopper-Pearson interval of bad/launches; latest verdict: the worst "
                        "of the case's results in its latest run" + (
                            " (mixed checks: one of its tests checked consistency, another declared the kernel "
                            "nondeterministic)" if any(record["mixed_checks"] for record in records) else "")]
                 if rows else [],
                 empty="no recorded cases match")


def case_runs_table(engine, selection: Selection, *, limit: int = 50) -> Table:
    """The selected cases' runs, newest first; the case column tells apart the cases a key
    prefix matched."""
    rows, records = [], []
    for result, arch, key in case_runs(engine, selection, limit=limit):
        low, high = rate_interval(result.bad_launches, result.launches)
        rows.append([key[:10], str(result.run_id), when(result.started_at), result.status, result.tag or "",
                     (result.revision or "")[:10], arch or "cpu", f"{result.bad_launches}/{result.launches}",
                     format_interval(low, high), f"{result.worst_wrong:,}", result.verdict, result.kinds])
        records.append({"key": key, "run_id": result.run_id, "started_at": result.started_at, "status": result.status,
                        "tag": result.tag, "revision": result.revision, "gpu_arch": arch, "launches": result.launches,
                        "bad_launches": result.bad_launches, "rate_low": low, "rate_high": high,
                        "worst_wrong": result.worst_wrong, "verdict": result.verdict, "kinds": result.kinds})
    return Table(["case", "run", "started", "status", "tag", "revision", "arch", "bad", "rate (95%)", "worst",
                  "verdict", "kinds"], rows, records=records, empty="no recorded runs of that case")
