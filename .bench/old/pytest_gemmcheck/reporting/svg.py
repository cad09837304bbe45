"""Server-side SVG charts for the HTML report, drawn from plain numbers.

No JavaScript and no charting library: each chart is a string of SVG markup that the page
inlines, so the report is one small file that reads offline. Marks are coloured by CSS class
(the page's stylesheet, plus ``CHART_CSS`` for the classes this module owns) rather than by
attribute, which keeps repeated marks short. Every string that reaches the markup is escaped
here: callers pass plain text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

HEAT_LEVELS = 8  # colour steps of the heatmap (classes h1..h8, light to dark)

CHART_CSS = """
svg.chart{display:block;max-width:100%;height:auto;font:11px system-ui,sans-serif;overflow:visible}
.grid{stroke:#e5e7eb;fill:none}.axis text{fill:#4b5563}.axis .name{fill:#111827;font-weight:600}
.hl{fill:#fef3c7}.strip-bg{fill:#eef0f3}.note{fill:#6b7280;font-style:italic}
.unk{font-weight:700}.cells{fill:#f3f4f6}.cell-lines{stroke:#fff;fill:none;pointer-events:none}
.h1{fill:#ffeda0}.h2{fill:#fed976}.h3{fill:#feb24c}.h4{fill:#fd8d3c}
.h5{fill:#fc4e2a}.h6{fill:#e31a1c}.h7{fill:#bd0026}.h8{fill:#800026}
"""


def esc(value) -> str:
    return escape(str(value), quote=True)


def num(value: float) -> str:
    """A coordinate, short: one decimal at most."""
    text = f"{value:.1f}".removesuffix(".0")
    return "0" if text == "-0" else text


# elements written as <name/>: the SVG shapes drawn here, and HTML's void <meta> (any other HTML
# element needs its closing tag, even when empty)
SELF_CLOSING = frozenset({"rect", "circle", "path", "meta"})


def tag(name: str, attrs: dict | None = None, body: str = "") -> str:
    """One element. ``body`` is markup (escape text with ``esc``); attribute values are
    escaped, floats shortened, and None leaves the attribute out."""
    parts = [name]
    for key, value in (attrs or {}).items():
        if value is not None:
            parts.append(f'{key}="{num(value) if isinstance(value, float) else esc(value)}"')
    opening = " ".join(parts)
    return f"<{opening}/>" if name in SELF_CLOSING and not body else f"<{opening}>{body}</{name}>"


def tooltip(text: str) -> str:
    return tag("title", body=esc(text))


def clamp(value: float, low: float, high: float) -> float:
    return max(low, min(high, value))


@dataclass(frozen=True)
class Symlog:
    """Linear near zero, logarithmic above ``floor``, up to ``top``: a rate of 0.4% and one of
    22% (900 and 12 clean launches), or 3 wrong elements and 3 million, stay apart on one axis,
    and zero keeps its place at the foot."""

    floor: float
    top: float

    def fraction(self, value: float) -> float:
        return clamp(math.log1p(max(value, 0.0) / self.floor) / math.log1p(self.top / self.floor), 0.0, 1.0)

    def ticks(self) -> list[float]:
        """Zero, then each power of ten from ``floor`` to ``top``."""
        values, value = [0.0], self.floor
        while value <= self.top * 1.0001:
            values.append(value)
            value *= 10
        return values

    @classmethod
    def counts(cls, largest: float) -> Symlog:
        """For counts of elements: up to the power of ten at or above the largest (10 at least)."""
        return cls(1.0, 10.0 ** max(1, math.ceil(math.log10(max(largest, 1.0)))))


@dataclass(frozen=True)
class Frame:
    """A chart's area: its size and the margins that hold the axes."""

    width: float
    height: float
    left: float = 46
    right: float = 10
    top: float = 22  # room for the y axis's name above the plot
    bottom: float = 30

    @property
    def inner_width(self) -> float:
        return self.width - self.left - self.right

    @property
    def foot(self) -> float:
        return self.height - self.bottom

    def y(self, scale: Symlog, value: float) -> float:
        return self.foot - (self.foot - self.top) * scale.fraction(value)

    def slot(self, index: int, count: int) -> tuple[float, float]:
        """The left edge and width of slot ``index`` of ``count`` equal slots across the plot."""
        step = self.inner_width / max(count, 1)
        return self.left + step * index, step

    def y_axis(self, scale: Symlog, label: Callable[[float], str], name: str) -> str:
        lines, texts = [], []
        for value in scale.ticks():
            y = num(self.y(scale, value))
            lines.append(f"M{num(self.left)} {y}H{num(self.width - self.right)}")
            texts.append(tag("text", {"x": self.left - 4, "y": float(y) + 3.5}, esc(label(value))))
        title = tag("text", {"class": "name", "x": 2.0, "y": 10.0, "text-anchor": "start"}, esc(name))
        return tag("path", {"class": "grid", "d": "".join(lines)}) + tag(
            "g", {"class": "axis", "text-anchor": "end"}, "".join(texts) + title
        )

    def x_labels(self, labels: Sequence[tuple[int, str]], count: int, name: str, below: float = 14) -> str:
        """``labels`` under their slots, ``below`` pixels under the plot, kept inside the chart
        (at about 6 px a character); the axis name at the right."""
        texts = []
        for index, text in labels:
            x0, step = self.slot(index, count)
            half = 3.0 * len(text)
            x = clamp(x0 + step / 2, half, self.width - half)
            texts.append(tag("text", {"x": x, "y": self.foot + below}, esc(text)))
        texts.append(
            tag(
                "text",
                {"class": "name", "x": self.width - self.right, "y": self.height - 2, "text-anchor": "end"},
                esc(name),
            )
        )
        return tag("g", {"class": "axis", "text-anchor": "middle"}, "".join(texts))

    def note(self, text: str) -> str:
        return tag(
            "text",
            {
                "class": "note",
                "x": self.left + self.inner_width / 2,
                "y": (self.top + self.foot) / 2,
                "text-anchor": "middle",
            },
            esc(text),
        )

    def svg(self, body: str, kind: str, label: str) -> str:
        return tag(
            "svg",
            {
                "class": f"chart {kind}",
                "viewBox": f"0 0 {num(self.width)} {num(self.height)}",
                "width": self.width,
                "height": self.height,
                "role": "img",
                "aria-label": label,
            },
            body,
        )


def spread_labels(count: int, text: Callable[[int], str], most: int = 6) -> list[tuple[int, str]]:
    """Labels for at most ``most`` slots of ``count``, evenly spread, the first and last included."""
    if count <= most:
        picks = range(count)
    else:
        picks = sorted({round(i * (count - 1) / (most - 1)) for i in range(most)})
    return [(i, text(i)) for i in picks]


# --- points with intervals -------------------------------------------------------------------


@dataclass
class IntervalMark:
    value: float
    low: float
    high: float
    css: str  # its colour's class
    tip: str


def interval_chart(
    marks: Sequence[IntervalMark],
    *,
    scale: Symlog,
    y_label: Callable[[float], str],
    x_labels: Sequence[tuple[int, str]],
    x_name: str,
    y_name: str,
    label: str,
    highlight: int | None = None,
    width: float = 500,
    height: float = 220,
) -> str:
    """A point per slot with its interval as a vertical bar; ``highlight`` shades one slot.
    Marks of one class share a group and their bars one path; each point carries its tooltip."""
    frame = Frame(width, height)
    count = len(marks)
    body = []
    if highlight is not None:
        x0, step = frame.slot(highlight, count)
        body.append(
            tag("rect", {"class": "hl", "x": x0, "y": frame.top, "width": step, "height": frame.foot - frame.top})
        )
    body.append(frame.y_axis(scale, y_label, y_name))
    _, step = frame.slot(0, count)
    radius = clamp(step * 0.3, 1.5, 4.0)
    bars: dict[str, list[str]] = {}
    dots: dict[str, list[str]] = {}
    for index, mark in enumerate(marks):
        x0, _ = frame.slot(index, count)
        x = x0 + step / 2
        bar = f"M{num(x)} {num(frame.y(scale, mark.low))}V{num(frame.y(scale, mark.high))}"
        bars.setdefault(mark.css, []).append(bar)
        dots.setdefault(mark.css, []).append(
            tag("circle", {"cx": x, "cy": frame.y(scale, mark.value), "r": radius}, tooltip(mark.tip))
        )
    groups = "".join(
        tag("g", {"class": css}, tag("path", {"d": "".join(bars[css])}) + "".join(dots[css])) for css in bars
    )
    body.append(tag("g", {"class": "marks", "stroke-width": clamp(step * 0.4, 1.0, 5.0)}, groups))
    body.append(frame.x_labels(x_labels, count, x_name))
    return frame.svg("".join(body), "intervals", label)


# --- bars --------------------------------------------------------------------------------------


@dataclass
class Bar:
    value: float | None  # None: not zero, but how much is unknown (drawn as "?")
    css: str
    inner: float = 0.0  # a part of the bar of another kind, drawn over it from its foot
    inner_css: str = ""


@dataclass
class Slot:
    bars: list[Bar]  # drawn side by side
    strip: str | None  # class of the slot's mark in the strip under the axis; None: no mark
    tip: str


def bar_chart(
    slots: Sequence[Slot],
    *,
    scale: Symlog,
    y_label: Callable[[float], str],
    x_labels: Sequence[tuple[int, str]],
    x_name: str,
    y_name: str,
    label: str,
    note: str = "",
    width: float = 390,
    height: float = 220,
) -> str:
    """Bars per slot on ``scale``, a strip under the axis that marks slots, and ``note`` in the
    middle when nothing is drawn. Slots with nothing to show emit no markup."""
    frame = Frame(width, height, bottom=38)
    count = len(slots)
    _, step = frame.slot(0, count)
    strip_y = frame.foot + 2
    body = [
        frame.y_axis(scale, y_label, y_name),
        tag("rect", {"class": "strip-bg", "x": frame.left, "y": strip_y, "width": frame.inner_width, "height": 6}),
    ]
    drawn = False
    for index, slot in enumerate(slots):
        x0, _ = frame.slot(index, count)
        bar_width = step * 0.8 / max(len(slot.bars), 1)
        marks = []
        for position, bar in enumerate(slot.bars):
            x = x0 + step * 0.1 + bar_width * position
            if bar.value is None:
                marks.append(
                    tag(
                        "text",
                        {
                            "class": f"unk {bar.css}",
                            "x": x + bar_width / 2,
                            "y": frame.foot - 3,
                            "text-anchor": "middle",
                        },
                        "?",
                    )
                )
                continue
            for value, css in ((bar.value, bar.css), (bar.inner, bar.inner_css)):
                if value > 0:
                    top = frame.y(scale, value)
                    marks.append(
                        tag("rect", {"class": css, "x": x, "y": top, "width": bar_width, "height": frame.foot - top})
                    )
        if slot.strip:
            marks.append(tag("rect", {"class": slot.strip, "x": x0, "y": strip_y, "width": step, "height": 6}))
        if marks:
            drawn = True
            body.append(tag("g", {}, tooltip(slot.tip) + "".join(marks)))
    if not drawn and note:
        body.append(frame.note(note))
    body.append(frame.x_labels(x_labels, count, x_name, below=22))
    return frame.svg("".join(body), "bars", label)


# --- heatmap -----------------------------------------------------------------------------------


def heat_level(count: int, largest: int) -> int:
    """Colour step of a non-zero count: logarithmic, 1 for a count of 1, HEAT_LEVELS for ``largest``."""
    if largest <= 1:
        return HEAT_LEVELS
    return clamp(1 + int((HEAT_LEVELS - 1) * math.log(max(count, 1)) / math.log(largest)), 1, HEAT_LEVELS)


@dataclass
class HeatGrid:
    counts: list[list[int]]  # counts[i][j], row-major
    rows: int  # the extent covered, in elements
    cols: int
    cell: tuple[int, int]  # one cell's size in elements (rows, cols); the last row and column may be cut short
    unit: str  # what is counted, for the tooltips and the legend ("wrong")


def heatmap(grid: HeatGrid, *, label: str, rows_name: str, cols_name: str, box: float = 240) -> str:
    """The grid's cells as rectangles over the extent, in its proportions (within ``box``
    pixels), coloured by count on a log scale; zero cells are the background. Adjacent cells
    of one row at the same colour step share one rectangle, which keeps a dense grid small."""
    aspect = grid.cols / max(grid.rows, 1)
    plot_w = box if aspect >= 1 else max(24.0, box * aspect)
    plot_h = box if aspect < 1 else max(24.0, box / aspect)
    left, top = 52.0, 30.0
    width, height = left + plot_w + 14, top + plot_h + 40
    cell_h, cell_w = grid.cell
    largest = max((max(row) for row in grid.counts if row), default=0)
    runs = []
    for i, row in enumerate(grid.counts):
        j = 0
        while j < len(row):
            if row[j] <= 0:
                j += 1
                continue
            level, start = heat_level(row[j], largest), j
            while j + 1 < len(row) and row[j + 1] > 0 and heat_level(row[j + 1], largest) == level:
                j += 1
            r0, c0 = i * cell_h, start * cell_w
            r1, c1 = min(grid.rows, (i + 1) * cell_h), min(grid.cols, (j + 1) * cell_w)
            j += 1
            if r1 <= r0 or c1 <= c0:
                continue
            values = row[start:j]
            low, high = min(values), max(values)
            amount = f"{low:,}–{high:,}" if low != high else f"{low:,}"
            tip = f"rows {r0:,}–{r1 - 1:,}, columns {c0:,}–{c1 - 1:,}: {amount} {grid.unit}"
            runs.append(
                tag("rect", {"class": f"h{level}", "x": c0, "y": r0, "width": c1 - c0, "height": r1 - r0}, tooltip(tip))
            )
    rows_count, cols_count = len(grid.counts), max((len(row) for row in grid.counts), default=0)
    lines = ""
    if plot_h / max(rows_count, 1) >= 4 and plot_w / max(cols_count, 1) >= 4:
        # Cell borders, where cells are big enough to see them: one stroke down the middle, as
        # wide as the plot and dashed at the cell height, draws every row border (and one
        # across, every column border); 0.8 px thick, in the extent's units.
        across, down = round(0.8 * grid.rows / plot_h, 1), round(0.8 * grid.cols / plot_w, 1)
        lines = tag(
            "g",
            {"class": "cell-lines"},
            tag(
                "path",
                {
                    "d": f"M{num(grid.cols / 2)} 0V{grid.rows}",
                    "stroke-width": grid.cols,
                    "stroke-dasharray": f"{num(across)} {num(cell_h - across)}",
                    "stroke-dashoffset": across / 2,
                },
            )
            + tag(
                "path",
                {
                    "d": f"M0 {num(grid.rows / 2)}H{grid.cols}",
                    "stroke-width": grid.rows,
                    "stroke-dasharray": f"{num(down)} {num(cell_w - down)}",
                    "stroke-dashoffset": down / 2,
                },
            ),
        )
    inner = tag(
        "svg",
        {
            "x": left,
            "y": top,
            "width": plot_w,
            "height": plot_h,
            "viewBox": f"0 0 {grid.cols} {grid.rows}",
            "preserveAspectRatio": "none",
        },
        tag("rect", {"class": "cells", "width": grid.cols, "height": grid.rows}) + "".join(runs) + lines,
    )
    axis = [
        tag("text", {"class": "name", "x": left + plot_w / 2, "y": 11.0, "text-anchor": "middle"}, esc(cols_name)),
        tag("text", {"x": left, "y": top - 4, "text-anchor": "start"}, "0"),
        tag("text", {"x": left + plot_w, "y": top - 4, "text-anchor": "end"}, esc(f"{grid.cols:,}")),
        tag(
            "text",
            {
                "class": "name",
                "x": 0.0,
                "y": 0.0,
                "text-anchor": "middle",
                "transform": f"translate(12 {num(top + plot_h / 2)}) rotate(-90)",
            },
            esc(rows_name),
        ),
        tag("text", {"x": left - 4, "y": top + 9, "text-anchor": "end"}, "0"),
        tag("text", {"x": left - 4, "y": top + plot_h, "text-anchor": "end"}, esc(f"{grid.rows:,}")),
    ]
    body = (
        inner + tag("g", {"class": "axis"}, "".join(axis)) + _heat_legend(largest, grid.unit, left, top + plot_h + 14)
    )
    frame = Frame(width, height)
    return frame.svg(body, "heatmap", label)


def _heat_legend(largest: int, unit: str, x: float, y: float) -> str:
    """The colour steps from a count of 1 to ``largest``, with their ends labelled."""
    if largest <= 0:
        return tag("text", {"class": "note", "x": x, "y": y + 10}, esc(f"no {unit} elements"))
    levels = range(heat_level(1, largest), HEAT_LEVELS + 1)
    swatches = "".join(
        tag("rect", {"class": f"h{level}", "x": 14 * k, "width": 14, "height": 10}) for k, level in enumerate(levels)
    )
    words = tag("text", {"x": -4, "y": 9, "text-anchor": "end"}, "1")
    words += tag("text", {"x": 14 * len(levels) + 4, "y": 9}, esc(f"{largest:,} {unit} per cell"))
    return tag("g", {"class": "axis", "transform": f"translate({num(x)} {num(y)})"}, swatches + words)


# --- sparkline ---------------------------------------------------------------------------------


def sparkline(rates: Sequence[float], *, scale: Symlog, tip: str, slots: int = 12) -> str:
    """A bar per rate, right-aligned in ``slots`` places; a zero rate is a short grey tick. Bars
    9 px apart and 28 px tall, so that a single bad run is seen at a glance."""
    width, height, step = slots * 9, 28, 9
    shown = rates[-slots:]
    bad, clean = [], []
    for index, rate in enumerate(shown):
        x = width - step * (len(shown) - index) + step / 2
        if rate > 0:
            bad.append(f"M{num(x)} {height}V{num(height - 1 - (height - 2) * scale.fraction(rate))}")
        else:
            clean.append(f"M{num(x)} {height}V{height - 2}")
    body = tooltip(tip)
    if bad:
        body += tag("path", {"class": "spark-bad", "d": "".join(bad)})
    if clean:
        body += tag("path", {"class": "spark-ok", "d": "".join(clean)})
    return tag(
        "svg",
        {"class": "spark", "viewBox": f"0 0 {width} {height}", "width": width, "height": height, "role": "img"},
        body,
    )
