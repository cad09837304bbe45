"""The HTML report (``gemmcheck report --html FILE``): one self-contained page from plain data.

The command fills a ``Report``; ``render`` turns it into the page: the history table (a row
per case), then per case a chart of its bad-launch rate over runs with each run's interval, the
wrong and differing elements per launch of one chosen run, heatmaps of the worst launch's wrong
elements and of the most differing launch's elements off the consensus over the output, and
the chosen run's compute-sanitizer runs. Runs are named by id, with their tag, revision and
start ("run 7 (main, ffb5715dc7, 2026-12-01 09:30)"): tags and revisions repeat, ids do not.
Charts are SVG drawn here (``svg``), styles and the one small
script are inline, and a Content-Security-Policy lets the page load nothing else: it works
opened from a CI artifact, offline. The script only makes table rows clickable and columns
sortable; the page reads the same without it. Every string from the data is escaped.

A collective case (a GEMM fused with a collective across ranks) is named with its collective and
world size, the history table gets a ranks column where the page holds one, its launches are
drawn launch by launch with each launch's ranks in order (a bar per launch and rank), and a
table gives each rank of the chosen run: its GPU, its bad launches and their kinds.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ..judging.stats import format_interval, rate_interval
from ..records.result import KINDS, collective_words
from .svg import (
    CHART_CSS,
    Bar,
    HeatGrid,
    IntervalMark,
    Slot,
    Symlog,
    bar_chart,
    esc,
    heatmap,
    interval_chart,
    sparkline,
    spread_labels,
    tag,
)

MAX_POINTS = 150  # runs drawn one by one in a rate chart; more are pooled into this many groups
MAX_BARS = 120  # launches drawn one by one in a launch chart; more are grouped into this many bars
RUN_LABELS = 10  # run ids under a rate chart ("#7", about 4 characters): every run up to this many
# Rates on a log scale above 0.1%: a run's interval upper bound is 22% after 12 clean launches
# and 0.33% after 900; on a linear axis every well-tested clean run would sit on the floor.
RATE_SCALE = Symlog(1e-3, 1.0)
VERDICTS = ("regression", "known-bad", "improved", "pass")  # worst first


@dataclass
class CaseRow:
    """One row of the history table: one case."""

    key: str  # 16 hex digits
    kernel: str
    quant: str
    shape: str  # "4096x7168x256"
    tile: str | None  # "256x128" or None
    params: dict  # the kernel's knobs, e.g. {"fuse": False}
    runs: int
    launches: int
    bad_launches: int
    rate_low: float  # two-sided 95% Clopper-Pearson interval of bad/launches, 0..1
    rate_high: float
    worst_wrong: int  # worst launch's wrong elements
    last_verdict: str  # worst verdict of the latest run: pass / regression / improved / known-bad
    last_bad: datetime | None  # when the case last had a bad launch
    trend: list[tuple[int, int]]  # (bad, launches) of its last runs, oldest first (up to 12)
    worst_differing: int | None = None  # the most elements of one launch off the consensus; None: not recorded
    hazards: int | None = None  # the most error-severity sanitizer reports of one result; None: never sanitized
    collective: str | None = None  # all_reduce / reduce_scatter / all_gather; None outside a collective case
    world_size: int | None = None  # its ranks
    ranks: dict[int, tuple[int, int]] | None = None  # a collective case's rank -> (bad, launches) over its runs


@dataclass
class RunPoint:
    """The case's result(s) in one run, for the rate chart."""

    run_id: int
    started_at: datetime
    label: str  # "run 7 (main, ffb5715dc7, 2026-12-01 09:30)": the id, its tag, revision and start
    bad: int
    launches: int
    low: float  # its two-sided 95% interval
    high: float
    verdict: str


@dataclass
class LaunchBar:
    """One launch of the chosen run."""

    index: int  # 1-based
    wrong: int
    nonfinite: int
    differing: int | None  # elements differing from the consensus; None = differs, count unknown
    kinds: list[str]  # failure kinds, e.g. ["wrong", "inconsistent"]; [] = clean
    rank: int | None = None  # a collective case's rank; None outside one

    @property
    def name(self) -> str:
        """'launch 7', 'launch 7, rank 3'."""
        return f"launch {self.index}" + (f", rank {self.rank}" if self.rank is not None else "")


@dataclass
class RankRow:
    """One rank of a collective case in the chosen run."""

    rank: int
    gpu: str  # its physical GPU (UUID) or torch device; "" when none was recorded
    launches: int
    bad: int
    kinds: list[str]  # the failure kinds of its launches


@dataclass
class TileMap:
    """The worst launch's wrong elements over the output."""

    m: int  # output rows
    n: int  # output columns
    tile: tuple[int, int]  # the case's tile (rows, cols)
    cell: tuple[int, int]  # tiles per grid cell (rows, cols): the grid is coarsened to at most 64x64 cells
    grid: list[list[int]]  # wrong (or differing) elements per cell, grid[i][j], row-major
    launch: int  # which launch
    wrong: int  # its wrong (or differing) elements in all
    what: str = "wrong"  # "wrong": off the reference; "differing": off the consensus of the launches
    rank: int | None = None  # a collective case's rank whose launch it is


@dataclass
class CaseDetail:
    row: CaseRow
    series: list[RunPoint]  # every run of the case, oldest first
    run_id: int | None  # the chosen run whose launches are shown
    launches: list[LaunchBar]  # that run's launches
    tiles: TileMap | None  # None when no launch had wrong tiles (or the case has no tile)
    differing: TileMap | None = None  # the most differing launch's elements off the consensus, where recorded
    sanitizer: list[str] = field(default_factory=list)  # the chosen run's compute-sanitizer runs, a line each
    ranks: list[RankRow] = field(default_factory=list)  # a collective case's ranks in the chosen run


@dataclass
class Report:
    title: str
    generated_at: datetime
    database: str  # where the data came from, password already hidden
    selection: str  # the filters, as text ("kernel=fused_* quant=ptpc"), "" for none
    cases: list[CaseRow]
    details: list[CaseDetail]  # one per case in `cases` (same order), or fewer


# --- words and numbers ---------------------------------------------------------------------------


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def rate_tick(value: float) -> str:
    return f"{100 * value:g}%" if value > 0 else "0"


def count_tick(value: float) -> str:
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:g}{suffix}"
    return f"{value:g}"


def when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M") if moment is not None else "never"


def params_text(params: dict) -> str:
    return " ".join(f"{name}={value}" for name, value in sorted(params.items(), key=lambda item: str(item[0])))


def case_title(row: CaseRow) -> str:
    parts = [row.kernel, row.quant, row.shape]
    if row.tile:
        parts.append(f"tile {row.tile}")
    if row.params:
        parts.append(params_text(row.params))
    if row.collective:
        parts.append(collective_words(row.collective, row.world_size or 0))
    return " ".join(parts)


def verdict_class(verdict: str) -> str:
    return f"v-{verdict}" if verdict in VERDICTS else "v-other"


def kind_class(kind: str) -> str:
    return f"k-{kind}" if kind in KINDS else "k-other"


def worst_verdict(verdicts: Sequence[str]) -> str:
    known = [v for v in verdicts if v in VERDICTS]
    return min(known, key=VERDICTS.index) if known else (verdicts[0] if verdicts else "")


def anchor(key: str) -> str:
    return "case-" + re.sub(r"[^0-9A-Za-z_-]", "", key)


def groups(count: int, most: int) -> list[range]:
    """``count`` items in order, in at most ``most`` consecutive groups of equal size (the last shorter)."""
    size = max(1, math.ceil(count / most))
    return [range(start, min(count, start + size)) for start in range(0, count, size)]


# --- charts --------------------------------------------------------------------------------------


def run_label(run_id: int, tag: str | None, revision: str | None, started_at: datetime | None) -> str:
    """'run 7 (main, ffb5715dc7, 2026-12-01 09:30)': a run by its id, which no other run shares,
    with what a reader knows it by."""
    facts = [part for part in (tag, (revision or "")[:10]) if part] + ([when(started_at)] if started_at else [])
    return f"run {run_id}" + (f" ({', '.join(facts)})" if facts else "")


def rate_chart(detail: CaseDetail) -> str:
    """The case's bad-launch rate per run with its interval, coloured by verdict; the chosen run
    shaded. Beyond MAX_POINTS runs, consecutive runs are pooled: the point is their pooled rate
    and the bar spans their intervals."""
    series = detail.series
    marks, labels, highlight = [], [], None
    for group in groups(len(series), MAX_POINTS):
        points = [series[i] for i in group]
        bad, launches = sum(p.bad for p in points), sum(p.launches for p in points)
        low, high = min(p.low for p in points), max(p.high for p in points)
        verdict = worst_verdict([p.verdict for p in points])
        first, last = points[0], points[-1]
        if len(points) == 1:
            tip = f"{first.label}: {bad}/{launches} bad · {format_interval(low, high)} · {verdict}"
        else:
            tip = (
                f"{first.label} … {last.label} ({len(points)} runs, {when(first.started_at)} … "
                f"{when(last.started_at)}): {bad}/{launches} launches bad; their intervals span "
                f"{format_interval(low, high)}; worst verdict {verdict}"
            )
        if any(p.run_id == detail.run_id for p in points):
            highlight = len(marks)
        marks.append(IntervalMark(bad / launches if launches else 0.0, low, high, verdict_class(verdict), tip))
        labels.append(f"#{first.run_id}")
    pooled = len(marks) < len(series)
    return interval_chart(
        marks,
        scale=RATE_SCALE,
        y_label=rate_tick,
        x_labels=spread_labels(len(marks), lambda i: labels[i], most=RUN_LABELS),
        x_name=f"runs ({len(series)}{', pooled' if pooled else ''})",
        y_name="bad-launch rate",
        label=f"bad-launch rate of {case_title(detail.row)} over {len(series)} runs",
        highlight=highlight,
    )


def _differing_words(differing: int | None) -> str:
    if differing is None:
        return "differs from the consensus (count unknown)"
    return f"{differing:,} differing from the consensus" if differing else "same bits as the consensus"


def launch_chart(launches: Sequence[LaunchBar], title: str) -> str:
    """Wrong elements (non-finite ones darker, over them) and differing elements per launch,
    with a strip that marks bad launches by their worst kind. Beyond MAX_BARS launches, each bar
    is the worst of consecutive launches."""
    slots, labels = [], []
    for group in groups(len(launches), MAX_BARS):
        items = [launches[i] for i in group]
        wrong, nonfinite = max(bar.wrong for bar in items), max(bar.nonfinite for bar in items)
        known = [bar.differing for bar in items if bar.differing is not None]
        differing = None if not any(known) and len(known) < len(items) else max(known, default=0)
        kinds = sorted(
            {k for bar in items for k in bar.kinds}, key=lambda k: KINDS.index(k) if k in KINDS else len(KINDS)
        )
        strip = kind_class(kinds[0]) if kinds else None
        kind_words = ", ".join(kinds) if kinds else "clean"
        if len(items) == 1:
            tip = (
                f"{items[0].name}: {wrong:,} wrong ({nonfinite:,} non-finite), "
                f"{_differing_words(differing)}; {kind_words}"
            )
        else:
            bad = sum(1 for bar in items if bar.kinds)
            span = (
                f"{items[0].name} – {items[-1].name}"
                if items[0].rank is not None  # launches of ranks
                else f"launches {items[0].index}–{items[-1].index}"
            )
            tip = (
                f"{span}: {bad} of {len(items)} bad; worst {wrong:,} wrong "
                f"({nonfinite:,} non-finite), {_differing_words(differing)}; {kind_words}"
            )
        slots.append(Slot([Bar(wrong, "s-wrong", nonfinite, "s-nonfinite"), Bar(differing, "s-differing")], strip, tip))
        labels.append(items[0].index)  # a group by its first launch: its range is in its tooltip
    largest = max((max(bar.wrong, bar.nonfinite, bar.differing or 0) for bar in launches), default=0)
    return bar_chart(
        slots,
        scale=Symlog.counts(largest),
        y_label=count_tick,
        x_labels=spread_labels(len(slots), lambda i: str(labels[i]), most=6),
        x_name=f"launch ({len(launches):,}{', grouped' if len(slots) < len(launches) else ''})",
        y_name="elements",
        note=f"no wrong or differing elements in {len(launches):,} launches",
        label=title,
    )


def tile_chart(tiles: TileMap) -> str:
    cell = (tiles.cell[0] * tiles.tile[0], tiles.cell[1] * tiles.tile[1])
    grid = HeatGrid(tiles.grid, tiles.m, tiles.n, cell, tiles.what)
    return heatmap(
        grid,
        label=f"{tiles.what} elements of launch {tiles.launch} over the {tiles.m}x{tiles.n} output",
        rows_name=f"m = {tiles.m:,} rows",
        cols_name=f"n = {tiles.n:,} columns",
    )


# --- the page ------------------------------------------------------------------------------------

PAGE_CSS = """
*{box-sizing:border-box}
body{margin:0;font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;color:#111827;background:#fff}
header,main{max-width:1320px;margin:0 auto;padding:12px 20px}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:17px;margin:18px 0 8px}
h3{font-size:15px;margin:0 0 4px;overflow-wrap:anywhere}.meta,.facts{color:#4b5563;margin:2px 0;overflow-wrap:anywhere}
.summary b{color:#dc2626}.empty{font-size:16px;color:#4b5563;padding:24px 0}
.scroll{overflow-x:auto}table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:4px 6px;border-bottom:1px solid #e5e7eb;text-align:left;white-space:nowrap;vertical-align:middle}
th{background:#f9fafb;position:sticky;top:0;cursor:pointer;user-select:none}th[aria-sort=ascending]::after{content:" ▲"}
th[aria-sort=descending]::after{content:" ▼"}td.num{text-align:right;font-variant-numeric:tabular-nums}
td.name{white-space:normal;min-width:150px;overflow-wrap:anywhere}
td.name small,td.params{color:#6b7280;font-family:ui-monospace,monospace}
td.params{white-space:normal;min-width:8em;max-width:16em;overflow-wrap:break-word;color:inherit;font-size:12px}
tr[data-href]{cursor:pointer}tbody tr:hover{background:#f3f4f6}
tr.regression{background:#fef2f2;font-weight:600}tr.regression td:first-child{box-shadow:inset 4px 0 #dc2626}
.badge{display:inline-block;padding:0 6px;border-radius:3px;background:var(--c);color:#fff;font-size:12px;\
font-weight:600}
.case{border:1px solid #e5e7eb;border-radius:6px;padding:12px 14px;margin:14px 0;scroll-margin-top:8px}
.case:target{outline:3px solid #f59e0b}.case.regression{border-left:5px solid #dc2626}\
.top{font-size:12px;margin-left:8px}
.charts{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start;margin-top:8px}
figure{margin:0;min-width:0}figcaption{font-size:13px;color:#374151;margin-bottom:4px;width:0;min-width:100%}
.legend{font-size:12px;color:#4b5563;margin:2px 0 0}.key{margin-right:10px;white-space:nowrap}
.key::before{content:"";display:inline-block;width:10px;height:10px;margin-right:4px;background:var(--c);
vertical-align:-1px}
.none{color:#6b7280;font-style:italic;max-width:300px}
.v-regression{--c:#dc2626}.v-known-bad{--c:#b45309}.v-improved{--c:#2563eb}.v-pass{--c:#15803d}.v-other{--c:#6b7280}
.s-wrong{--c:#dc2626}.s-nonfinite{--c:#581c87}.s-differing{--c:#f59e0b}
.k-raised{--c:#111827}.k-bad_output{--c:#4b5563}.k-unwritten{--c:#7e22ce}.k-nonfinite{--c:#581c87}
.k-wrong{--c:#dc2626}.k-inconsistent{--c:#f59e0b}.k-ranks_disagree{--c:#0891b2}.k-other{--c:#9ca3af}
.marks g{fill:var(--c)}.marks path{stroke:var(--c)}.bars g rect,.bars .unk{fill:var(--c)}
.spark{vertical-align:middle}.spark-bad{stroke:#dc2626;stroke-width:7}.spark-ok{stroke:#9ca3af;stroke-width:7}
td.trend{white-space:nowrap}.last{margin-left:6px;font-variant-numeric:tabular-nums;color:#4b5563}
.last.bad{color:#dc2626;font-weight:600}.sanitizer h4{font-size:13px;margin:8px 0 2px}
.sanitizer ul{margin:0;padding-left:18px;font-size:12px;font-family:ui-monospace,monospace;overflow-wrap:anywhere}
table.ranks{width:auto}table.ranks th{position:static;cursor:default}tr.bad-rank{background:#fef2f2;font-weight:600}
"""

# Rows open their case's section; headers sort (numbers by data-v, the rest as text).
SCRIPT = """(function(){var t=document.getElementById("history");if(!t)return;var b=t.tBodies[0];
t.addEventListener("click",function(e){var h=e.target.closest("th");if(h){var i=h.cellIndex,
d=h.getAttribute("aria-sort")==="ascending"?-1:1,r=Array.prototype.slice.call(b.rows);
r.sort(function(x,y){var p=x.cells[i],q=y.cells[i];return d*(p.dataset.v!==undefined?p.dataset.v-q.dataset.v:
p.textContent.localeCompare(q.textContent));});r.forEach(function(x){b.appendChild(x);});
Array.prototype.forEach.call(h.parentNode.cells,function(c){c.removeAttribute("aria-sort");});
h.setAttribute("aria-sort",d>0?"ascending":"descending");return;}
var row=e.target.closest("tr[data-href]");if(row&&!e.target.closest("a"))location.hash=row.dataset.href;});})();"""

STYLE = CHART_CSS + PAGE_CSS


def _source_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


# Nothing but this page's own style and script may run, and nothing may load: no network even
# if a string slipped through unescaped.
CSP = f"default-src 'none'; style-src {_source_hash(STYLE)}; script-src {_source_hash(SCRIPT)}; img-src data:"


def legend(entries: Sequence[tuple[str, str]]) -> str:
    keys = "".join(tag("span", {"class": f"key {css}"}, esc(text)) for css, text in entries)
    return tag("p", {"class": "legend"}, keys)


def td(text: str, css: str | None = None, sort: float | None = None) -> str:
    """A table cell; ``sort`` is the number the column sorts it by, where that is not its text."""
    value = None if sort is None else (str(sort) if isinstance(sort, int) else f"{sort:.6g}")
    return tag("td", {"class": css, "data-v": value}, esc(text))


def ranks_words(row: CaseRow) -> str:
    """A collective case's cell: 'all_reduce x4: rank 3 5/600, rank 1 1/600' (its ranks with bad
    launches, the worst first), 'all_reduce x4: no rank bad'; '-' for any other case."""
    if not row.collective:
        return "-"
    bad = sorted(
        ((rank, counts) for rank, counts in (row.ranks or {}).items() if counts[0]),
        key=lambda item: (-item[1][0], item[0]),
    )
    shown = ", ".join(f"rank {rank} {bad_count:,}/{launches:,}" for rank, (bad_count, launches) in bad[:3])
    return f"{row.collective} x{row.world_size}: " + ((shown + (", ..." if len(bad) > 3 else "")) or "no rank bad")


def history_table(report: Report, linked: set[str]) -> str:
    headers = [
        "verdict",
        "case",
        "quant",
        "shape",
        "tile",
        "params",
        "runs",
        "bad / launches",
        "rate (95%)",
        "trend (last run)",
        "worst wrong",
        "differing",
        "hazards",
        "last bad",
    ]
    collective = any(row.collective for row in report.cases)  # a ranks column, after the params
    if collective:
        headers.insert(6, "ranks")
    head = tag("thead", {}, tag("tr", {}, "".join(tag("th", {"scope": "col"}, esc(h)) for h in headers)))
    rows = []
    for row in report.cases:
        verdict = row.last_verdict
        badge = tag("span", {"class": f"badge {verdict_class(verdict)}"}, esc(verdict or "-"))
        rank = VERDICTS.index(verdict) if verdict in VERDICTS else len(VERDICTS)
        name = esc(row.kernel)
        if row.key in linked:
            name = tag("a", {"href": "#" + anchor(row.key)}, name)
        name += "<br>" + tag("small", {}, esc(row.key))
        trend = [bad / launches if launches else 0.0 for bad, launches in row.trend]
        spark_tip = "last runs, oldest first: " + " ".join(f"{bad}/{launches}" for bad, launches in row.trend)
        cells = [
            tag("td", {"data-v": rank}, badge),
            tag("td", {"class": "name"}, name),
            td(row.quant),
            td(row.shape),
            td(row.tile or "-"),
            td(params_text(row.params), "params"),
            *([td(ranks_words(row), "params")] if collective else []),
            td(f"{row.runs:,}", "num", row.runs),
            td(f"{row.bad_launches:,}/{row.launches:,}", "num", row.bad_launches / row.launches if row.launches else 0),
            td(format_interval(row.rate_low, row.rate_high) if row.launches else "-", "num", row.rate_high),
            # the trend sorts by the latest run's rate
            tag(
                "td",
                {
                    "class": "trend",
                    "data-v": row.trend[-1][0] / row.trend[-1][1] if row.trend and row.trend[-1][1] else 0,
                },
                trend_cell(row.trend, trend, spark_tip),
            ),
            td(f"{row.worst_wrong:,}", "num", row.worst_wrong),
            td(_count(row.worst_differing), "num", row.worst_differing or 0),
            td(_count(row.hazards), "num", -1 if row.hazards is None else row.hazards),
            td(when(row.last_bad), None, int(row.last_bad.timestamp()) if row.last_bad else 0),
        ]
        attrs = {
            "class": "regression" if verdict == "regression" else None,
            "data-href": "#" + anchor(row.key) if row.key in linked else None,
        }
        rows.append(tag("tr", attrs, "".join(cells)))
    table = tag("table", {"id": "history"}, head + tag("tbody", {}, "".join(rows)))
    return tag("section", {}, tag("h2", {}, "History") + tag("div", {"class": "scroll"}, table))


def _count(count: int | None) -> str:
    return "-" if count is None else f"{count:,}"


def trend_cell(runs: list[tuple[int, int]], rates: list[float], tip: str) -> str:
    """A bar per run (red where it had bad launches), and the latest run's count in words
    beside it: the cell reads without the chart."""
    if not runs:
        return ""
    bad, launches = runs[-1]
    return sparkline(rates, scale=RATE_SCALE, tip=tip) + tag(
        "span", {"class": "last" + (" bad" if bad else "")}, esc(f"{bad:,}/{launches:,}")
    )


def _figure(caption: str, body: str, css: str | None = None) -> str:
    return tag("figure", {"class": css}, tag("figcaption", {}, esc(caption)) + body)


def rank_table(ranks: Sequence[RankRow]) -> str:
    """A row per rank of the chosen run: its GPU, its bad launches with their 95% interval, and
    their kinds; a rank with a bad launch is marked as a regression row is."""
    headers = ["rank", "GPU", "bad / launches", "rate (95%)", "kinds"]
    head = tag("thead", {}, tag("tr", {}, "".join(tag("th", {"scope": "col"}, esc(h)) for h in headers)))
    rows = []
    for rank in ranks:
        low, high = rate_interval(rank.bad, rank.launches)
        cells = [
            td(str(rank.rank), "num"),
            td(rank.gpu or "-"),
            td(f"{rank.bad:,}/{rank.launches:,}", "num"),
            td(format_interval(low, high) if rank.launches else "-", "num"),
            td(", ".join(rank.kinds) or "clean"),
        ]
        rows.append(tag("tr", {"class": "bad-rank" if rank.bad else None}, "".join(cells)))
    return tag("table", {"class": "ranks"}, head + tag("tbody", {}, "".join(rows)))


def case_section(detail: CaseDetail) -> str:
    row = detail.row
    verdict = row.last_verdict
    heading = (
        esc(case_title(row))
        + " "
        + tag("span", {"class": f"badge {verdict_class(verdict)}"}, esc(verdict or "-"))
        + tag("a", {"class": "top", "href": "#top"}, "↑ table")
    )
    facts = [f"key {row.key}", plural(row.runs, "run"), f"{row.bad_launches:,}/{row.launches:,} launches bad"]
    if row.launches:
        facts.append(f"rate {format_interval(row.rate_low, row.rate_high)} (95%)")
    worst = f"worst launch {row.worst_wrong:,} wrong"
    if row.worst_differing:
        worst += f", most differing {row.worst_differing:,} off the consensus"
    facts += [worst]
    if row.hazards is not None:
        facts.append(f"{plural(row.hazards, 'compute-sanitizer hazard')} at most in a run")
    facts.append(f"last bad {when(row.last_bad)}")
    charts = []
    chosen = next((p for p in detail.series if p.run_id == detail.run_id), None)
    run_words = chosen.label if chosen else f"run {detail.run_id}"
    if detail.series:
        verdicts = [v for v in VERDICTS if any(p.verdict == v for p in detail.series)]
        caption = "Bad-launch rate per run, with its 95% interval"
        if any(p.run_id == detail.run_id for p in detail.series):
            caption += "; the shaded run is the one whose launches are shown"
        charts.append(_figure(caption, rate_chart(detail) + legend([(verdict_class(v), v) for v in verdicts]), "rates"))
    else:
        charts.append(tag("p", {"class": "none"}, "No runs recorded."))
    if detail.launches:
        title = f"Launches of {run_words}: wrong and differing elements; the strip marks bad launches"
        # the strip's colours for wrong, non-finite and inconsistent launches are their bars'
        others = sorted({k for bar in detail.launches for k in bar.kinds} - {"wrong", "nonfinite", "inconsistent"})
        keys = legend(
            [("s-wrong", "wrong"), ("s-nonfinite", "non-finite"), ("s-differing", "differing (? = count unknown)")]
            + [(kind_class(kind), kind) for kind in others]
        )
        charts.append(_figure(title, launch_chart(detail.launches, title) + keys, "launches"))
    else:
        charts.append(tag("p", {"class": "none"}, "No launches recorded for the chosen run."))
    maps = [tiles for tiles in (detail.tiles, detail.differing) if tiles is not None]
    if detail.ranks:
        caption = f"Ranks of {run_words}: each one's GPU and bad launches"
        charts.append(_figure(caption, rank_table(detail.ranks), "ranks"))
    for tiles in maps:
        off = "wrong elements" if tiles.what == "wrong" else "elements differing from the consensus"
        rank = f", rank {tiles.rank}" if tiles.rank is not None else ""
        caption = (
            f"Launch {tiles.launch}{rank}: {tiles.wrong:,} {off} over the output; tile "
            f"{tiles.tile[0]}x{tiles.tile[1]}, a cell is {tiles.cell[0]}x{tiles.cell[1]} tiles"
        )
        charts.append(_figure(caption, tile_chart(tiles), "tiles"))
    if not maps:
        differs = any(
            bar.differing or (bar.differing is None and "inconsistent" in bar.kinds) for bar in detail.launches
        )
        if not row.tile:
            words = "No tile map: the case has no tile."
        elif differs:
            words = (
                "No tile map: the launches that differ from the consensus were not mapped over the output "
                "(their outputs were not kept), and no launch had wrong elements."
            )
        else:
            words = "No launch had wrong or differing elements."
        charts.append(tag("p", {"class": "none"}, esc(words)))
    sanitizer = ""
    if detail.sanitizer:
        items = "".join(tag("li", {}, esc(line)) for line in detail.sanitizer)
        sanitizer = tag("div", {"class": "sanitizer"}, tag("h4", {}, "compute-sanitizer") + tag("ul", {}, items))
    body = (
        tag("h3", {}, heading)
        + tag("p", {"class": "facts"}, esc(" · ".join(facts)))
        + tag("div", {"class": "charts"}, "".join(charts))
        + sanitizer
    )
    css = "case regression" if verdict == "regression" else "case"
    return tag("section", {"class": css, "id": anchor(row.key)}, body)


def render(report: Report) -> str:
    """The whole page, as one string of HTML."""
    by_key = {detail.row.key: detail for detail in report.details}
    meta = [f"generated {report.generated_at.isoformat(' ', 'minutes')}", f"database {report.database}"]
    if report.selection:
        meta.append(f"selection {report.selection}")
    header = tag("h1", {}, esc(report.title)) + tag("p", {"class": "meta"}, esc(" · ".join(meta)))
    if report.cases:
        regressions = sum(1 for row in report.cases if row.last_verdict == "regression")
        flaky = sum(1 for row in report.cases if row.bad_launches)
        summary = (
            f"{plural(len(report.cases), 'case')} · "
            + (tag("b", {}, plural(regressions, "regression")) if regressions else "no regressions")
            + f" · {flaky:,} with bad launches"
        )
        header += tag("p", {"class": "summary"}, summary)
        sections = [history_table(report, set(by_key))]
        details = [by_key[row.key] for row in report.cases if row.key in by_key]
        if details:
            sections.append(tag("section", {}, tag("h2", {}, "Cases") + "".join(case_section(d) for d in details)))
        main = "".join(sections)
    else:
        where = f" match the selection {report.selection}" if report.selection else " in this database"
        main = tag("p", {"class": "empty"}, esc(f"No recorded cases{where}."))
    head = (
        '<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
        + tag("meta", {"http-equiv": "Content-Security-Policy", "content": CSP})
        + '<link rel="icon" href="data:,">'
        + tag("title", {}, esc(report.title))
        + f"<style>{STYLE}</style>"
    )
    body = tag("header", {"id": "top"}, header) + tag("main", {}, main) + f"<script>{SCRIPT}</script>"
    return f'<!DOCTYPE html>\n<html lang="en"><head>{head}</head><body>{body}</body></html>\n'
