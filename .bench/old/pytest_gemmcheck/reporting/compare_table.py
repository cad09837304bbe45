"""The table of ``gemmcheck compare``: the A/B table of a PR. One row per case, one column per side (a tag,
a revision, a run or a stack selector), "fails 12/12 (worst 436,944)" or "passes 0/12", and
each later side's change against the first with its p-value; with ``--timing``, launch times
taken on a quiet GPU only.

The change is judged as the verdicts judge: a one-sided Fisher exact test of the bad-launch
counts, each side's launches first divided by the design effect of its results (launches of
one process are not independent, judging/stats.py). Timing takes, per side, the fastest launch
of its uncontended results (the min over runs when there are several), and marks a change
smaller than the spread of either side (over runs, or between the min and the median of one
run) as within noise.

A collective case's cell names its ranks with bad launches ("fails 3/800 (worst 512 wrong; rank
3 2/200, rank 1 1/200)"), and its ranks are the clusters of the design effect: a rank is a
process, and its launches cluster as a process's do.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from ..config.table import DEFAULTS
from ..history.dashboard import ResultRow, add_ranks, any_result, cases, known_runs, results
from ..history.selection import Selection, SelectionError, check_stack_fields, parse_field
from ..judging.stats import design_effect, effective_counts, fisher_greater, fisher_less
from .history_table import case_record, ranks_record, ranks_text
from .tables import Table, params_text


@dataclass(frozen=True)
class Side:
    label: str
    selection: Selection


def parse_side(text: str, engine) -> Side:
    """``tag:NAME``, ``rev:PREFIX``, ``run:ID``, ``stack:FIELD=PATTERN[,FIELD=PATTERN]``, or a
    bare word that names a run id, a tag or a revision prefix in the history (in that order).
    A side must select a recorded result: one that selects none (a stack field the history does
    not know, a tag no run has) is a usage error, never an empty column."""
    side = _side(text, engine)
    if side.selection.stack:
        with engine.connect() as connection:
            check_stack_fields(connection, side.selection.stack, f"--side {text!r}")
    if not any_result(engine, side.selection):
        raise SelectionError(
            f"--side {text!r} selects no recorded result (gemmcheck runs lists the runs, tags and revisions)"
        )
    return side


def _side(text: str, engine) -> Side:
    kind, sep, value = text.partition(":")
    if sep and kind in ("tag", "rev", "revision", "run", "stack"):
        if not value:
            raise SelectionError(f"--side {text!r}: nothing after {kind}:")
        if kind == "tag":
            return Side(value, Selection(tags=(value,)))
        if kind in ("rev", "revision"):
            return Side(value[:10], Selection(revisions=(value,)))
        if kind == "run":
            if not value.isdigit():
                raise SelectionError(f"--side {text!r}: a run id is a number")
            return Side(f"run {value}", Selection(runs=(int(value),)))
        fields = tuple(parse_field(part, "--side stack:") for part in value.split(","))
        return Side(value, Selection(stack=fields))
    runs = known_runs(engine)
    if text.isdigit() and int(text) in {run_id for run_id, _, _ in runs}:
        return Side(f"run {text}", Selection(runs=(int(text),)))
    if any(tag == text for _, tag, _ in runs):
        return Side(text, Selection(tags=(text,)))
    if re.fullmatch(r"[0-9a-f]{4,40}", text) and any((revision or "").startswith(text) for _, _, revision in runs):
        return Side(text[:10], Selection(revisions=(text,)))
    raise SelectionError(
        f"--side {text!r} is no run id, tag or revision in the history; say tag:NAME, rev:PREFIX, "
        "run:ID or stack:FIELD=PATTERN"
    )


@dataclass
class SideCase:
    """One case's results on one side."""

    launches: int = 0
    bad: int = 0
    worst: int = 0
    worst_differing: int | None = None  # None: no result recorded it
    hazards: int | None = None  # the most error-severity sanitizer reports of one result; None: never sanitized
    per_result: list[tuple[int, int]] = field(default_factory=list)  # (bad, launches): the clusters
    times: dict[int, list[ResultRow]] = field(default_factory=dict)  # run -> its uncontended results
    contended: int = 0  # results left out of the timing
    ranks: dict[int, list[int]] | None = None  # a collective case's: rank -> [bad, launches]

    def add(self, row: ResultRow) -> None:
        self.launches += row.launches
        self.bad += row.bad_launches
        self.worst = max(self.worst, row.worst_wrong)
        if row.worst_differing is not None:
            self.worst_differing = max(self.worst_differing or 0, row.worst_differing)
        if row.hazards is not None:
            self.hazards = max(self.hazards or 0, row.hazards)
        if row.per_rank is not None:  # a cluster per rank: each rank is a process
            self.ranks = {} if self.ranks is None else self.ranks
            add_ranks(self.ranks, row.per_rank)
            self.per_result += [(int(entry["bad_launches"]), int(entry["launches"])) for entry in row.per_rank]
        else:
            self.per_result.append((row.bad_launches, row.launches))
        if row.elapsed_min_s is not None:
            if row.contended is False:
                self.times.setdefault(row.run_id, []).append(row)
            else:
                self.contended += 1

    @property
    def words(self) -> str:
        """'fails 3/12 (worst 512 wrong, 92 differing)', 'passes 0/12', with ', 2 hazards' where a
        sanitizer run reported them."""
        if not self.launches:
            return "—"
        hazards = f", {self.hazards:,} hazard{'s' if self.hazards != 1 else ''}" if self.hazards else ""
        if not self.bad:
            return f"passes 0/{self.launches}{hazards}"
        figures = [f"{self.worst:,} wrong"] if self.worst or not self.worst_differing else []
        if self.worst_differing:
            figures.append(f"{self.worst_differing:,} differing")
        ranks = f"; {ranks_text(self.ranks)}" if self.ranks else ""
        return f"fails {self.bad}/{self.launches} (worst {', '.join(figures)}{ranks}){hazards}"

    def effective(self) -> tuple[int, int]:
        return effective_counts(self.bad, self.launches, design_effect(self.per_result))

    def timing(self) -> tuple[float, float] | None:
        """(fastest launch in seconds, its relative spread), or None without uncontended results."""
        if not self.times:
            return None
        per_run = [min(row.elapsed_min_s for row in rows) for rows in self.times.values()]
        fastest = min(per_run)
        if len(per_run) > 1:
            spread = (max(per_run) - fastest) / fastest
        else:
            rows = next(iter(self.times.values()))
            medians = [row.elapsed_median_s for row in rows if row.elapsed_median_s is not None]
            spread = (statistics.median(medians) - fastest) / fastest if medians else 0.0
        return fastest, spread


def change(before: SideCase, after: SideCase, alpha: float) -> tuple[str, float | None]:
    """The change from ``before`` to ``after``: (words, p-value of the test in its direction)."""
    if not before.launches or not after.launches:
        return "—", None
    bad_a, n_a = before.effective()
    bad_b, n_b = after.effective()
    p_worse = fisher_greater(bad_b, n_b, bad_a, n_a)
    p_better = fisher_less(bad_b, n_b, bad_a, n_a)
    if p_better < alpha:
        return ("fixed" if after.bad == 0 else "better"), p_better
    if p_worse < alpha:
        return ("broken" if before.bad == 0 else "worse"), p_worse
    return "no significant change", min(p_worse, p_better)


def _milliseconds(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms" if seconds < 1 else f"{seconds:.2f} s"


def compare_table(
    engine, sides: list[Side], common: Selection, *, alpha: float = DEFAULTS.alpha, timing: bool = False
) -> Table:
    if len(sides) < 2:
        raise SelectionError("compare needs two sides or more (--side A --side B)")
    per_side: list[dict[int, SideCase]] = []
    for side in sides:
        found: dict[int, SideCase] = defaultdict(SideCase)
        for row in results(engine, common, side.selection):
            found[row.case_id].add(row)
        per_side.append(found)
    case_ids = {case_id for found in per_side for case_id in found}
    with engine.connect() as connection:
        infos = cases(connection, case_ids)
    collective = any(info.collective for info in infos.values())  # the records get its fields
    order = sorted(
        case_ids,
        key=lambda i: (
            infos[i].kernel,
            infos[i].quant,
            infos[i].m,
            infos[i].n,
            infos[i].k,
            infos[i].tile or "",
            params_text(infos[i].params),
        ),
    )
    base = sides[0].label
    headers = ["kernel", "quant", "shape", "tile", "params", *[side.label for side in sides]]
    headers += [f"{side.label} vs {base}" for side in sides[1:]]
    if timing:
        headers += [f"time {side.label}" for side in sides] + [f"time {side.label} vs {base}" for side in sides[1:]]
    rows, records, noisy, left_out = [], [], False, 0
    for case_id in order:
        info = infos[case_id]
        cells = [per_side[i].get(case_id, SideCase()) for i in range(len(sides))]
        row = [
            info.kernel,
            info.quant,
            info.shape,
            info.tile or "",
            params_text(info.params),
            *[c.words for c in cells],
        ]
        record = {**case_record(info, collective=collective), "sides": {}}
        for side, cell in zip(sides, cells):
            record["sides"][side.label] = {
                "launches": cell.launches,
                "bad_launches": cell.bad,
                "worst_wrong": cell.worst,
                "worst_differing": cell.worst_differing,
                "hazards": cell.hazards,
            }
            if collective:
                record["sides"][side.label]["ranks"] = ranks_record(cell.ranks)
        for side, cell in zip(sides[1:], cells[1:]):
            words, p_value = change(cells[0], cell, alpha)
            row.append(words if p_value is None else f"{words} (p = {p_value:.2g})")
            record["sides"][side.label].update(change=words, p_value=p_value)
        if timing:
            times = [cell.timing() for cell in cells]
            left_out += sum(cell.contended for cell in cells)
            row += [_milliseconds(t[0]) if t else "—" for t in times]
            for side, t in zip(sides, times):
                record["sides"][side.label].update(time_s=t[0] if t else None, spread=t[1] if t else None)
            for side, t in zip(sides[1:], times[1:]):
                if t is None or times[0] is None:
                    row.append("—")
                    continue
                delta = (t[0] - times[0][0]) / times[0][0]
                within_noise = max(t[1], times[0][1]) > abs(delta)
                noisy |= within_noise
                row.append(f"{100 * delta:+.1f}%" + (" ±" if within_noise else ""))
                record["sides"][side.label].update(time_change=delta, within_noise=within_noise)
        rows.append(row)
        records.append(record)
    clusters = "results (a collective case's: of its ranks)" if collective else "results"
    notes = (
        [
            f"p: one-sided Fisher exact test in the direction of the change, launches divided by the design effect "
            f"of their {clusters}; significant below {alpha:g}"
        ]
        if rows
        else []
    )
    if timing and rows:
        notes.append(
            "time: the fastest launch of each side's uncontended results (min over runs)"
            + ("; ± marks a change smaller than the spread of its sides" if noisy else "")
        )
        if left_out:
            notes.append(
                f"{left_out} result{'s' if left_out != 1 else ''} that ran on a contended GPU (another "
                "process or a background load), or where that is not known, left out of the times"
            )
    return Table(headers, rows, records=records, notes=notes, empty="no recorded case on either side")
