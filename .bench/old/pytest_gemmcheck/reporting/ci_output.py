"""A session's results where CI reads them: properties of each test case in pytest's JUnit XML,
a markdown table (``--gemmcheck-summary``, e.g. GitHub's step summary), and JSON
(``--gemmcheck-json``).

JUnit properties are named ``gemmcheck.<i>.<field>``, ``i`` counting a test's cases from 1 in
the order they ran, plus ``gemmcheck.cases`` (how many): ``gemmcheck.1.verdict``,
``gemmcheck.1.bad_launches``, ``gemmcheck.2.verdict``... (a collective case adds ``collective``,
``world_size`` and ``per_rank``, "rank 0 0/200, rank 3 2/200"). They go on the test item's
``user_properties``, pytest's own mechanism (``record_property``), so that its reports carry
them, from an xdist worker to its controller too. pytest writes them in every
``junit_family``; the strict xunit2 schema has no properties of a test case (pytest warns so of
``record_property``), so a validator of it wants ``junit_family=xunit1``.

The markdown table has the case columns of ``gemmcheck compare`` (kernel, quant, shape, tile,
params), regressions first, and is rendered by the dashboard's own Table; the file is appended
to, never overwritten, as GitHub requires of ``$GITHUB_STEP_SUMMARY``. The JSON file is
written whole; its shape is ``{"format": 1, "version", "run", "totals", "results"}``, each
result being ``CaseResult.to_dict()`` (``CaseResult.from_dict`` reads it back); NaN and infinity
are written as null.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import jsontext
from ..judging.message import sanitizer_words, static_words
from ..judging.stats import format_percent, format_rate, rate_upper_bound
from ..records.result import CaseResult, CompiledResult
from ..records.result_text import VERDICT_WIDTH, per_rank_counts, rank_blame, summary_line, verdict_word
from .tables import Table, params_text

PROPERTY_PREFIX = "gemmcheck."
JSON_FORMAT = 1  # the JSON document's "format": raised only when a field changes meaning or goes
VERDICTS = ("regression", "improved", "known-bad", "pass")  # the order of the title's counts


# --- words shared by the three forms ---------------------------------------------------------


def shape(result: CaseResult) -> str:
    return f"{result.m}x{result.n}x{result.k}"


def rate_bound(result: CaseResult) -> float:
    """The one-sided 95% upper bound of the result's bad-launch rate."""
    return rate_upper_bound(len(result.bad_launches), len(result.launches))


def worst_words(result: CaseResult) -> str:
    """'512 wrong, 92 differing (wrong, inconsistent)': the worst launch's wrong elements and
    elements off the consensus, and the failure kinds of all launches."""
    text = f"{result.worst_wrong:,} wrong"
    if result.worst_differing:
        text += f", {result.worst_differing:,} differing"
    return text + (f" ({', '.join(result.kinds)})" if result.kinds else "")


def hazard_count(result: CaseResult) -> int:
    """Error-severity reports on the kernel under test, over its sanitizer runs (shown, or
    counted past --print-limit): what the history's ``result.hazards`` holds."""
    return sum(run.errors + run.unshown_errors for run in result.hazards)


def sanitizer_cell(result: CaseResult) -> str:
    """The sanitizer runs in one cell: their one-line summaries, '' when none ran."""
    return "; ".join(sanitizer_words(result))


def baseline_words(result: CaseResult) -> str:
    """'clean (no bad launch expected)', or '0/900 (rate < 0.33%), history: 3 earlier runs on ...'."""
    baseline = result.baseline or {}
    source = baseline.get("source")
    if not source:
        return "not judged"
    if source == "clean":
        return "clean (no bad launch expected)"
    counts = format_rate(int(baseline.get("bad_launches") or 0), int(baseline.get("launches") or 0))
    return f"{counts}, {baseline.get('description') or source}"


# --- JUnit XML ---------------------------------------------------------------------------------


def case_properties(result: CaseResult) -> list[tuple[str, str]]:
    """One case's evidence, as (field, text) pairs."""
    fields = [
        ("verdict", result.verdict or "not judged"),
        ("key", result.key),
        ("kernel", result.kernel),
        ("quant", result.quant),
        ("shape", shape(result)),
        ("tile", result.tile or ""),
        ("params", jsontext.dumps(result.params, sort_keys=True, default=str)),
    ]
    if isinstance(result, CompiledResult):
        fields.append(("static", static_words(result)))
    else:
        fields += [
            ("launches", str(len(result.launches))),
            ("bad_launches", str(len(result.bad_launches))),
            ("rate_upper_95", f"{rate_bound(result):.6g}"),
            ("worst_wrong", str(result.worst_wrong)),
            ("worst_differing", str(result.worst_differing)),
            ("kinds", ",".join(result.kinds)),
            ("hazards", str(hazard_count(result))),
            ("sanitize", sanitizer_cell(result)),
        ]
        if result.collective:  # a collective case's ranks: 'rank 0 0/200, rank 3 2/200'
            fields += [
                ("collective", result.collective),
                ("world_size", str(result.world_size)),
                ("per_rank", per_rank_counts(result)),
            ]
    line = summary_line(result)  # the terminal's first line, without its column padding
    fields += [
        ("baseline", baseline_words(result)),
        ("accepted", "true" if result.baseline.get("accepted") else "false"),
        ("summary", f"{verdict_word(result)} {line[VERDICT_WIDTH + 1 :]}"),
    ]
    return fields


def junit_properties(payload: list[dict]) -> list[tuple[str, str]]:
    """The properties of a test whose cases gave ``payload`` (their ``to_dict()``)."""
    results = [CaseResult.from_dict(data) for data in payload]
    properties = [(PROPERTY_PREFIX + "cases", str(len(results)))]
    for index, result in enumerate(results, 1):
        properties += [(f"{PROPERTY_PREFIX}{index}.{name}", value) for name, value in case_properties(result)]
    return properties


# --- markdown ----------------------------------------------------------------------------------

SUMMARY_HEADERS = [
    "verdict",
    "kernel",
    "quant",
    "shape",
    "tile",
    "params",
    "bad/launches",
    "rate (95%)",
    "worst",
    "baseline",
    "test",
]


def summary_row(result: CaseResult, sanitizer: bool = False) -> list[str]:
    """A case's row; ``sanitizer``: with the sanitizer column (some case of the table ran it)."""
    verdict = verdict_word(result) if result.verdict else "NOT JUDGED"
    row = [verdict, result.kernel, result.quant, shape(result), result.tile or "", params_text(result.params)]
    if isinstance(result, CompiledResult):
        row += ["—", "—", static_words(result)]
    else:
        counts = f"{len(result.bad_launches)}/{len(result.launches)}"
        if result.collective:
            counts += f" ({rank_blame(result)})"
        row += [counts, f"< {format_percent(rate_bound(result))}", worst_words(result)]
    if sanitizer:
        row.append(sanitizer_cell(result))
    return row + [baseline_words(result), result.nodeid]


def _summary_verdict(result: CaseResult) -> str:
    """What the title counts a result as: its verdict, or 'accepted' for an accepted regression."""
    if result.baseline.get("accepted"):
        return "accepted"
    return result.verdict or "not judged"


def _rank(result: CaseResult) -> tuple:
    """Regressions first, then in the case order of ``gemmcheck compare``: the same under xdist,
    whose reports arrive in any order."""
    verdict = VERDICTS.index(result.verdict) if result.verdict in VERDICTS else len(VERDICTS)
    return (
        verdict,
        result.kernel,
        result.quant,
        result.m,
        result.n,
        result.k,
        result.tile or "",
        params_text(result.params),
        result.nodeid,
    )


def summary_table(results: list[CaseResult], *, tag: str | None = None, history: str = "") -> Table:
    counts = {}
    for result in results:
        counts[_summary_verdict(result)] = counts.get(_summary_verdict(result), 0) + 1
    order = [verdict for verdict in VERDICTS if verdict in counts] + sorted(set(counts) - set(VERDICTS))
    title = (
        f"gemmcheck: {len(results)} case{'' if len(results) == 1 else 's'}"
        + (f" ({tag})" if tag else "")
        + ": "
        + ", ".join(f"{counts[v]} {v}" for v in order)
    )
    sanitizer = any(result.sanitize for result in results)
    notes = [
        "rate: the one-sided 95% upper bound (Clopper-Pearson) of the bad-launch rate; worst: the worst "
        "launch's wrong elements and elements differing from the consensus, and the failure kinds of all "
        "launches"
        + (
            "; sanitizer: each compute-sanitizer run of the case (a run that did not run to a report checked nothing)"
            if sanitizer
            else ""
        )
        + (f". {history[0].upper()}{history[1:]}" if history else "")
    ]  # one paragraph: markdown joins lines
    ranked = sorted(results, key=_rank)
    headers = SUMMARY_HEADERS[:9] + ["sanitizer"] + SUMMARY_HEADERS[9:] if sanitizer else SUMMARY_HEADERS
    return Table(
        headers,
        [summary_row(result, sanitizer) for result in ranked],
        title=title,
        notes=notes,
        empty="no gemmcheck case ran",
    )


# --- JSON --------------------------------------------------------------------------------------


def json_document(results: list[CaseResult], run: dict, version: str) -> str:
    from ..records.sanitize import STATUSES

    totals = {
        "cases": len(results),
        "launches": sum(len(r.launches) for r in results),
        "bad_launches": sum(len(r.bad_launches) for r in results),
        "verdicts": {verdict: sum(1 for r in results if r.verdict == verdict) for verdict in VERDICTS},
        "accepted": sum(1 for r in results if r.baseline.get("accepted")),
        "hazards": sum(1 for r in results if r.hazards),  # cases with an error-severity report
        "sanitizer_runs": {
            status: sum(1 for r in results for run in r.sanitize if run.status == status) for status in STATUSES
        },
    }
    document = {
        "format": JSON_FORMAT,
        "version": version,
        "run": run,
        "totals": totals,
        "results": [result.to_dict() for result in results],
    }
    return jsontext.dumps(document, indent=1, default=str) + "\n"


# --- files -------------------------------------------------------------------------------------


def resolve_path(value: str, base_dir: Path) -> Path:
    """A FILE option's value: ``~`` expanded, relative to where pytest was started."""
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else base_dir / path


def _make_folder(path: Path) -> None:
    """Missing folders above ``path`` made, as --junitxml makes them."""
    if not path.parent.exists():
        path.parent.mkdir(parents=True)


def append_text(path: Path, text: str) -> None:
    """Appended (a step summary collects every step's), a blank line after what was there."""
    _make_folder(path)
    with open(path, "a", encoding="utf-8") as handle:
        if handle.seekable() and handle.tell():  # a pipe (/dev/stdout) is not
            handle.write("\n")
        handle.write(text.rstrip("\n") + "\n")


def replace_text(path: Path, text: str) -> None:
    """The file written whole, as --junitxml writes its own."""
    _make_folder(path)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def write_files(
    settings, base_dir: Path, results: list[CaseResult], run: dict, version: str, history: str = ""
) -> list[tuple[str, bool]]:
    """--gemmcheck-summary and --gemmcheck-json, for a session that ran cases: a line each for
    the terminal summary, and whether it says that the file was not written."""
    lines = []
    jobs = []
    if settings.summary:
        jobs.append(
            (
                "summary",
                settings.summary,
                append_text,
                lambda: summary_table(results, tag=settings.tag, history=history).markdown(),
                "appended to",
            )
        )
    if settings.json:
        jobs.append(("json", settings.json, replace_text, lambda: json_document(results, run, version), "written to"))
    for name, value, write, render, done in jobs:
        flag = f"--gemmcheck-{name}"
        try:
            path = resolve_path(value, base_dir)
            write(path, render())
        except (OSError, ValueError, RuntimeError) as exc:
            lines.append((f"gemmcheck: {flag}: NOT written to {value}: {_reason(exc)}", True))
        else:
            lines.append((f"gemmcheck: {'summary' if name == 'summary' else 'JSON'} {done} {path}", False))
    return lines
