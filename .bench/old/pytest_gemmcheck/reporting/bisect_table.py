"""``gemmcheck bisect``'s report (bisect/bisection.py's plain data) as a table of its probes under
the first bad revision, in any ``--format``."""

from __future__ import annotations

import json

from .tables import Table


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%" if value < 0.999 else f"{100 * value:.2f}%"


def render(report: dict, form: str) -> str:
    if form == "json":
        return json.dumps(report, indent=1)
    first = report["first_bad"]
    unit = "launches" if report["unit"] == "launch" else "processes"
    if first:
        title = (
            f"first bad revision: {first['revision'][:12]} ({_pct(first['posterior'])} of the posterior; "
            f"commit {first['commits_after_good']} of {report['commits']} after --good) {first['subject']}"
        )
        if report["stopped"] != "confident":
            title = "most likely " + title + f" -- below the asked {report['confidence']:g}"
    else:
        title = "no first bad revision: " + report["stopped_words"]
    rows = []
    for i, p in enumerate(report["probes"], 1):
        label = "good" if p["position"] == 0 else ("bad" if p["position"] == report["commits"] else str(p["position"]))
        counted = "skip" if p["source"] == "skip" else f"{p['bad']}/{p['units']}"
        rows.append(
            [str(i), p["revision"][:12], label, counted, p["source"], p["top_after"][:12], _pct(p["mass_after"])]
        )
    notes = [
        f"stopped: {report['stopped_words']} (confidence {report['confidence']:g}, budget {report['budget']})",
        _rates(report, unit),
        f"{report['launches']} launches run, {report['seconds']:.1f} s",
    ]
    skipped = [p for p in report["probes"] if p["source"] == "skip" and p["note"]]
    notes += [f"skipped {p['revision'][:12]}: {p['note']}" for p in skipped]
    table = Table(
        ["#", "revision", "commit", f"bad/{unit}", "source", "top after", "its mass"],
        rows,
        title=title,
        notes=[""] + notes if form == "table" else notes,
        empty="no probes",
        records=report["probes"],
    )
    return table.render(form)


def _rates(report: dict, unit: str) -> str:
    if report["stopped"] == "good-fails":

        def counted_at(position: int) -> str:
            probes = [p for p in report["probes"] if p["source"] != "skip" and p["position"] == position]
            return f"{sum(p['bad'] for p in probes)}/{sum(p['units'] for p in probes)} bad"

        return f"counted in {unit}: --good {counted_at(0)}, --bad {counted_at(report['commits'])}"
    if report["units_counted"]:
        return (
            f"counted in {unit}; rate before {_pct(report['rate_good'])}, from it on {_pct(report['rate_bad'])} "
            f"(posterior means on either side of the most likely first bad revision)"
        )
    return f"counted in {unit}: none was counted (every probe was skipped), so there is no rate to tell"
