"""The HTML report page (pytest_gemmcheck.reporting.html) from synthetic data: fast checks of
its markup (it parses, loads nothing, escapes the data, stays small), then the page in a real
headless Chromium through Playwright (no console errors, no request but the file, every chart
drawn with a size, a screenshot kept under tests/artifacts/). The browser tests skip, saying
why, where Chromium or Playwright is missing (ci/install-browser.sh installs both)."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pytest_gemmcheck.judging.stats import binom_cdf, rate_upper_bound
from pytest_gemmcheck.reporting.html import (
    MAX_BARS,
    MAX_POINTS,
    CaseDetail,
    CaseRow,
    LaunchBar,
    RankRow,
    Report,
    RunPoint,
    TileMap,
    render,
)

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = "/usr/bin/chromium"
START = datetime(2025, 11, 3, 9, 30, tzinfo=timezone.utc)
NASTY = "<script>alert(1)</script> \"&'"
NASTY_TAG = "<img src=x onerror=alert(2)>"


def interval95(bad: int, launches: int) -> tuple[float, float]:
    """Two-sided 95% Clopper-Pearson interval, as the database queries give it. Its lower end
    from the lower tail (``bad`` terms): stats.rate_interval sums the other tail, seconds at
    the 40,000 launches of a case here."""
    high = rate_upper_bound(bad, launches, 0.975)
    if bad == 0:
        return 0.0, high
    lo, hi = 0.0, bad / launches
    for _ in range(60):  # the p at which P(X >= bad) = 2.5%: binom_cdf(bad - 1) falls as p grows
        mid = (lo + hi) / 2
        if binom_cdf(bad - 1, launches, mid) > 0.975:
            lo = mid
        else:
            hi = mid
    return lo, high


def make_case(
    key: int,
    kernel: str,
    *,
    runs: list[tuple[int, int, str]],
    launches: list[LaunchBar],
    tiles: TileMap | None = None,
    tile: str | None = "256x128",
    params=None,
    label=None,
    quant: str = "ptpc",
    shape: str = "4096x7168x256",
) -> CaseDetail:
    """A case's row and detail from its runs' (bad, launches, verdict), oldest first."""
    series = []
    for number, (bad, count, verdict) in enumerate(runs, start=1):
        low, high = interval95(bad, count)
        series.append(
            RunPoint(
                number,
                START + timedelta(hours=6 * number),
                label(number) if label else f"run {number}",
                bad,
                count,
                low,
                high,
                verdict,
            )
        )
    bad_total, launch_total = sum(p.bad for p in series), sum(p.launches for p in series)
    low, high = interval95(bad_total, launch_total)
    last_bad = max((p.started_at for p in series if p.bad), default=None)
    row = CaseRow(
        f"{key:016x}",
        kernel,
        quant,
        shape,
        tile,
        params if params is not None else {"fuse": False},
        len(series),
        launch_total,
        bad_total,
        low,
        high,
        max((bar.wrong for bar in launches), default=0),
        series[-1].verdict,
        last_bad,
        [(p.bad, p.launches) for p in series[-12:]],
    )
    return CaseDetail(row, series, series[-1].run_id, launches, tiles)


def clean_launches(count: int) -> list[LaunchBar]:
    return [LaunchBar(i, 0, 0, 0, []) for i in range(1, count + 1)]


def tile_map(m, n, tile, cell, wrong_cells: dict, launch=1) -> TileMap:
    rows = math.ceil(math.ceil(m / tile[0]) / cell[0])
    cols = math.ceil(math.ceil(n / tile[1]) / cell[1])
    grid = [[wrong_cells.get((i, j), 0) for j in range(cols)] for i in range(rows)]
    return TileMap(m, n, tile, cell, grid, launch, sum(map(sum, grid)))


def synthetic_cases() -> list[CaseDetail]:
    clean = make_case(
        0x3F2A9C0012345678,
        "fused_gemm_scatter",
        runs=[(0, 90, "pass")] * 10,
        launches=clean_launches(90),
        label=lambda n: f"v1.{n}",
    )
    flaky_launches = clean_launches(12)
    flaky_launches[4] = LaunchBar(5, 92, 0, 92, ["wrong", "inconsistent"])
    flaky_launches[8] = LaunchBar(9, 0, 0, None, ["inconsistent"])
    flaky_launches[10] = LaunchBar(11, 0, 0, 0, ["raised"])
    flaky = make_case(
        0x00A1B2C3D4E5F607,
        "gemm_blockscale",
        quant="blockscale",
        tile="128x128",
        runs=[
            (0, 12, "pass"),
            (1, 12, "pass"),
            (0, 12, "pass"),
            (2, 12, "known-bad"),
            (0, 12, "pass"),
            (2, 12, "pass"),
        ],
        launches=flaky_launches,
        tiles=tile_map(4096, 7168, (128, 128), (1, 1), {(2, 40): 60, (3, 40): 32}, launch=5),
        params={"split_k": 2, "stages": 3},
    )
    regression_launches = [
        LaunchBar(
            i,
            512 * (1 + i % 3),
            16 if i == 7 else 0,
            512 * (1 + i % 3),
            ["nonfinite", "wrong", "inconsistent"] if i == 7 else ["wrong", "inconsistent"],
        )
        for i in range(1, 13)
    ]
    regression = make_case(
        0xDEADBEEF00C0FFEE,
        "fused_gemm_scatter",
        runs=[(0, 12, "pass")] * 7 + [(12, 12, "regression")],
        launches=regression_launches,
        params={"fuse": True},
        tiles=tile_map(
            4096, 7168, (256, 128), (1, 1), {(0, 1): 1536, (0, 2): 700, (1, 1): 40, (5, 30): 3, (15, 55): 1}, launch=3
        ),
    )
    many_runs = [(1 if n % 37 == 0 else 0, 100, "regression" if n % 37 == 0 else "pass") for n in range(1, 401)]
    many_launches = clean_launches(10_000)
    for i in (17, 4242, 9999):
        many_launches[i] = LaunchBar(i + 1, 30_000, 0, 30_000, ["wrong", "inconsistent"])
    dense = {(i, j): (i * 64 + j) * 13 % 4000 + 1 for i in range(64) for j in range(64)}
    hundreds = make_case(
        0x1111222233334444,
        "mxfp8_gemm",
        quant="mxfp8",
        shape="16384x16384x4096",
        runs=many_runs,
        launches=many_launches,
        tile="128x128",
        label=lambda n: f"nightly-{n}",
        tiles=tile_map(16384, 16384, (128, 128), (2, 2), dense, launch=4243),
    )
    nasty = make_case(
        0x0123456789ABCDEF,
        NASTY,
        quant="bf16",
        tile=None,
        runs=[(0, 12, "pass"), (1, 12, "improved")],
        launches=clean_launches(11) + [LaunchBar(12, 0, 0, 7, ["inconsistent"])],
        params={"mode": "<b>&amp;</b>", "ünï": "©ødé ✓ 中文"},
        label=lambda n: NASTY_TAG,
    )
    return [regression, flaky, clean, hundreds, nasty]


def synthetic_report(details: list[CaseDetail] | None = None, selection='kernel=* quant=<any> & "all"') -> Report:
    details = synthetic_cases() if details is None else details
    return Report(
        "gemmcheck report",
        datetime(2025, 12, 1, 12, 0, tzinfo=timezone.utc),
        "postgresql+psycopg://ci:***@db.example/gemmcheck",
        selection,
        [d.row for d in details],
        details,
    )


def fifty_cases() -> list[CaseDetail]:
    """A realistic report: 50 cases, each with 20 runs of 12 launches, a few of them flaky."""
    details = []
    for number in range(50):
        runs = [(1 if (number % 7 == 0 and run % 5 == 0) else 0, 12, "pass") for run in range(20)]
        launches = clean_launches(12)
        tiles = None
        if number % 7 == 0:
            launches[3] = LaunchBar(4, 256, 0, 256, ["wrong", "inconsistent"])
            tiles = tile_map(4096, 7168, (256, 128), (1, 1), {(0, 3): 256}, launch=4)
        details.append(
            make_case(number, f"kernel_{number}", runs=runs, launches=launches, tiles=tiles, label=lambda n: f"ci-{n}")
        )
    return details


# --- the markup --------------------------------------------------------------------------------

VOID = {"meta", "link", "br", "img", "input", "hr"}


class Structure(HTMLParser):
    """Checks that every element is closed in order, SVG included, and collects what loads."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.links, self.scripts, self.text = [], [], [], 0, []

    def handle_starttag(self, name, attrs):
        self._attrs(name, attrs)
        if name not in VOID:
            self.stack.append(name)

    def handle_startendtag(self, name, attrs):
        self._attrs(name, attrs)

    def _attrs(self, name, attrs):
        self.scripts += name == "script"
        for key, value in attrs:
            if key in ("src", "href", "xlink:href", "action", "srcset", "poster", "data"):
                self.links.append(value or "")

    def handle_endtag(self, name):
        if not self.stack or self.stack[-1] != name:
            self.errors.append(f"</{name}> closes {self.stack[-1] if self.stack else 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(page: str) -> Structure:
    parser = Structure()
    parser.feed(page)
    parser.close()
    return parser


def test_page_parses_and_loads_nothing():
    page = render(synthetic_report())
    structure = parse(page)
    assert structure.errors == [] and structure.stack == []
    assert structure.scripts == 1  # the page's own script, and no other
    assert all(link.startswith("#") or link == "data:," for link in structure.links), structure.links
    assert not re.search(r"(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", page.replace("db.example/gemmcheck", ""))
    assert "@import" not in page and "url(" not in page


def test_data_is_escaped():
    page = render(synthetic_report())
    assert "<script>alert(1)" not in page and NASTY_TAG not in page and "<b>&amp;</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &quot;&amp;&#x27;" in page
    text = "".join(parse(page).text)
    assert NASTY in text and "©ødé ✓ 中文" in text and 'kernel=* quant=<any> & "all"' in text


def test_intervals_read_as_the_issue_asks():
    twelve = make_case(1, "all_bad", runs=[(12, 12, "regression")], launches=clean_launches(12))
    clean = make_case(2, "all_good", runs=[(0, 900, "pass")], launches=clean_launches(900))
    page = render(synthetic_report([twelve, clean]))
    assert ">74–100%</td>" in page and ">0–0.41%</td>" in page


def test_a_regression_row_stands_out():
    page = render(synthetic_report())
    rows = re.findall(r"<tr( class=\"regression\")? data-href=\"#case-([0-9a-f]+)\"", page)
    assert [flag for flag, key in rows if key == "deadbeef00c0ffee"] == [' class="regression"']
    assert sum(1 for flag, _ in rows if flag) == 1
    assert '<section class="case regression" id="case-deadbeef00c0ffee">' in page


def test_no_cases_says_so():
    page = render(synthetic_report([], selection="kernel=nothing_*"))
    assert "No recorded cases match the selection kernel=nothing_*." in page
    assert "<table" not in page and "<svg" not in page
    assert parse(page).errors == []


def test_a_clean_case_still_draws_its_charts_at_zero():
    clean = synthetic_cases()[2]
    page = render(synthetic_report([clean]))
    assert page.count('<svg class="chart intervals"') == 1 and page.count('<svg class="chart bars"') == 1
    assert page.count("<circle") == 10  # one point per run, at the foot
    assert "no wrong or differing elements in 90 launches" in page
    assert "No launch had wrong or differing elements." in page


def test_runs_are_named_by_id_with_tag_revision_and_time():
    """Three untagged runs of one commit, and six runs in all: each run's id under the chart,
    and its tag, revision and start in its tooltip and the caption of its launches."""
    from pytest_gemmcheck.reporting.html import run_label

    def label(number):
        return run_label(number, "nightly" if number > 3 else None, "ffb5715dc7e1", START + timedelta(hours=number))

    case = make_case(
        0x77,
        "same_commit",
        runs=[(0, 12, "pass")] * 5 + [(1, 12, "known-bad")],
        launches=clean_launches(12),
        label=label,
    )
    page = render(synthetic_report([case]))
    chart = re.search(r'<svg class="chart intervals".*?</svg>', page).group(0)
    assert [f"#{n}" for n in range(1, 7)] == re.findall(r">(#\d+)</text>", chart)  # every run, none left out
    assert "run 1 (ffb5715dc7, 2025-11-03 10:30): 0/12 bad" in chart
    assert "run 6 (nightly, ffb5715dc7, 2025-11-03 15:30): 1/12 bad" in chart
    assert "Launches of run 6 (nightly, ffb5715dc7, 2025-11-03 15:30)" in page
    assert run_label(9, None, None, None) == "run 9"


def test_the_trend_reads_without_the_chart():
    page = render(synthetic_report([synthetic_cases()[0]]))  # the regression: 7 clean runs, then 12/12
    cell = re.search(r'<td class="trend"[^>]*>(.*?)</td>', page).group(1)
    assert re.search(r'<svg class="spark" viewBox="0 0 108 28" width="108" height="28"', cell)
    assert cell.endswith('<span class="last bad">12/12</span>')


def test_elements_off_the_consensus_get_a_heatmap_of_their_own():
    """A launch bad by consistency alone has no wrong element: its differing elements are the
    case's worst figure, and their map is drawn."""
    launches = clean_launches(12)
    launches[5] = LaunchBar(6, 0, 0, 92, ["inconsistent"])
    differing = tile_map(4096, 7168, (256, 128), (1, 1), {(3, 7): 60, (3, 8): 32}, launch=6)
    differing.what = "differing"
    case = make_case(0x99, "subtle_race", runs=[(0, 12, "pass"), (1, 12, "regression")], launches=launches)
    case.differing = differing
    case.row.worst_differing = 92
    page = render(synthetic_report([case]))
    assert "worst launch 0 wrong, most differing 92 off the consensus" in page
    assert "Launch 6: 92 elements differing from the consensus over the output" in page
    assert page.count('<svg class="chart heatmap"') == 1
    # without a recorded map the page says why there is none
    case.differing = None
    assert "the launches that differ from the consensus were not mapped" in render(synthetic_report([case]))


def test_huge_histories_stay_bounded():
    hundreds = synthetic_cases()[3]
    page = render(synthetic_report([hundreds]))
    assert page.count("<circle") <= MAX_POINTS
    launches_svg = re.search(r'<svg class="chart bars".*?</svg>', page).group(0)
    assert launches_svg.count("<g>") <= MAX_BARS
    assert "3 of 84 bad" not in page and "1 of 84 bad" in page  # 10,000 launches in groups of 84
    assert len(page.encode()) < 200_000, len(page.encode())


def test_fifty_cases_make_a_small_page():
    page = render(synthetic_report(fifty_cases()))
    size = len(page.encode())
    print(f"50 cases: {size:,} bytes")
    assert page.count('data-href="#case-') == 50
    assert size < 350_000


def test_the_page_needs_nothing_heavy():
    code = (
        "import sys, pytest_gemmcheck.reporting.html; "
        "print(sorted(m for m in ('torch', 'sqlalchemy', 'triton') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_details_may_be_fewer_than_cases():
    details = synthetic_cases()
    report = synthetic_report(details)
    report.details = details[:2]
    page = render(report)
    assert page.count("<tr") == 1 + len(details)  # the header, then every case
    assert page.count('data-href="#case-') == 2 and page.count('<section class="case') == 2


def collective_case() -> CaseDetail:
    """A GEMM fused with an all-reduce over 4 ranks, 12 launches each: rank 3 wrong on launches 3
    and 7 (its tile map is launch 7's), rank 1's bits off the others' on launch 9."""
    launches = []
    for index in range(1, 13):
        for rank in range(4):
            kinds = (
                ["wrong"] if rank == 3 and index in (3, 7) else (["ranks_disagree"] if (index, rank) == (9, 1) else [])
            )
            wrong = 512 if kinds == ["wrong"] else 0
            launches.append(LaunchBar(index, wrong, 0, 0, kinds, rank=rank))
    tiles = tile_map(4096, 7168, (256, 256), (1, 1), {(3, 5): 512}, launch=7)
    tiles.rank = 3
    detail = make_case(
        0xC011EC7100000001,
        "gemm_ar",
        quant="bf16",
        tile="256x256",
        params={"fuse": True},
        runs=[(0, 48, "pass"), (3, 48, "regression")],
        launches=launches,
        tiles=tiles,
    )
    detail.row.collective, detail.row.world_size = "all_reduce", 4
    detail.row.ranks = {0: (0, 24), 1: (1, 24), 2: (0, 24), 3: (2, 24)}
    detail.ranks = [
        RankRow(rank, f"GPU-{rank:04d}", 12, bad, kinds)
        for rank, bad, kinds in ((0, 0, []), (1, 1, ["ranks_disagree"]), (2, 0, []), (3, 2, ["wrong"]))
    ]
    return detail


def test_a_collective_case_shows_its_ranks():
    details = synthetic_cases() + [collective_case()]
    page = render(synthetic_report(details))
    structure = parse(page)
    assert structure.errors == [] and structure.stack == []
    assert [link for link in structure.links if not link.startswith("#")] == ["data:,"]  # the empty icon
    text = " ".join(structure.text)
    assert "gemm_ar bf16 4096x7168x256 tile 256x256 fuse=True all_reduce over 4 ranks" in text
    assert '<th scope="col">ranks</th>' in page
    assert "all_reduce x4: rank 3 2/24, rank 1 1/24" in text
    assert page.count('<td class="params">-</td>') == len(details) - 1  # the other cases have no ranks
    assert "Ranks of run 2: each one's GPU and bad launches" in text
    assert page.count('<tr class="bad-rank">') == 2 and "GPU-0003" in text
    assert "launch 7, rank 3: 512 wrong (0 non-finite)" in page and "launch 9, rank 1: 0 wrong" in page
    assert "Launch 7, rank 3: 512 wrong elements over the output" in text


def test_a_page_without_a_collective_case_has_no_ranks_column():
    page = render(synthetic_report())
    assert '<th scope="col">ranks</th>' not in page and "Ranks of" not in page


# --- in a real browser ---------------------------------------------------------------------------

BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _missing(reason: str):
    """Skip, or fail where the browser is required (CI sets GEMMCHECK_REQUIRE_BROWSER=1)."""
    if os.environ.get("GEMMCHECK_REQUIRE_BROWSER"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright import sync_api
    except ImportError:
        _missing("Playwright is not installed (ci/install-browser.sh)")
    executable = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    if executable is None:
        _missing(f"no Chromium at {CHROMIUM} or on PATH (ci/install-browser.sh installs Debian's chromium)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=BROWSER_ARGS)
        yield browser
        browser.close()


def open_page(browser, report: Report, path: Path):
    """The report written to ``path`` and opened from there, with what it logged and asked for."""
    path.write_text(render(report), encoding="utf-8")
    return open_page_file(browser, path)


def open_page_file(browser, path: Path):
    page = browser.new_page(viewport={"width": 1360, "height": 900})
    seen = {"console": [], "errors": [], "requests": [], "dialogs": []}
    page.on(
        "console",
        lambda message: (
            message.type in ("error", "warning") and seen["console"].append(f"{message.type}: {message.text}")
        ),
    )
    page.on("pageerror", lambda error: seen["errors"].append(str(error)))
    page.on("request", lambda request: seen["requests"].append(request.url))
    page.on("dialog", lambda dialog: (seen["dialogs"].append(dialog.message), dialog.dismiss()))
    page.goto(path.as_uri(), wait_until="load")
    return page, seen


def test_report_in_chromium(browser, tmp_path):
    details = synthetic_cases()
    page, seen = open_page(browser, synthetic_report(details), tmp_path / "report.html")
    try:
        assert seen["console"] == [] and seen["errors"] == [] and seen["dialogs"] == []
        assert seen["requests"] == [(tmp_path / "report.html").as_uri()]
        assert page.locator("#history tbody tr").count() == len(details)
        expected = {
            "intervals": len(details),
            "bars": len(details),
            "heatmap": sum(1 for d in details if d.tiles is not None),
        }
        for kind, count in expected.items():
            charts = page.locator(f"svg.chart.{kind}")
            assert charts.count() == count, kind
            for index in range(count):
                box = charts.nth(index).bounding_box()
                assert box and box["width"] > 50 and box["height"] > 50, (kind, index, box)
        for kind, mark in (("intervals", "circle"), ("bars", "g > rect"), ("heatmap", "svg rect[class^=h]")):
            marks = page.locator(f"svg.chart.{kind} {mark}")
            assert marks.count() > 0, kind
            box = marks.first.bounding_box()
            assert box and box["width"] > 0 and box["height"] > 0, (kind, box)
        assert page.locator("script").count() == 1
        nasty = page.locator("#history td.name").filter(has_text="alert(1)")
        assert NASTY in nasty.inner_text()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        shutil.copy(ARTIFACTS / "report.png", tmp_path / "report.png")
    finally:
        page.close()


def test_rows_open_their_case_and_headers_sort(browser, tmp_path):
    page, seen = open_page(browser, synthetic_report(), tmp_path / "report.html")
    try:
        page.locator("#history tbody tr").nth(1).locator("td").nth(3).click()  # the flaky case's shape
        assert page.evaluate("location.hash") == "#case-00a1b2c3d4e5f607"
        page.locator("#history th", has_text="worst wrong").click()
        worst = page.locator("#history tbody td:nth-child(11)").all_inner_texts()
        assert worst == sorted(worst, key=lambda text: int(text.replace(",", "")))
        page.locator("#history th", has_text="worst wrong").click()
        assert page.locator("#history tbody td:nth-child(11)").first.inner_text() == "30,000"
        assert seen["console"] == [] and seen["errors"] == []
    finally:
        page.close()


def test_a_collective_case_in_chromium(browser, tmp_path):
    details = [collective_case()] + synthetic_cases()[:2]
    page, seen = open_page(browser, synthetic_report(details), tmp_path / "ranks.html")
    try:
        assert seen["console"] == [] and seen["errors"] == [] and seen["dialogs"] == []
        assert seen["requests"] == [(tmp_path / "ranks.html").as_uri()]
        headers = page.locator("#history th").all_inner_texts()
        assert headers[6] == "ranks" and headers[7] == "runs"
        assert (
            page.locator("#history tbody tr")
            .first.locator("td")
            .nth(6)
            .inner_text()
            .startswith("all_reduce x4: rank 3 2/24")
        )
        ranks = page.locator("table.ranks tbody tr")
        assert ranks.count() == 4 and ranks.nth(3).locator("td").nth(1).inner_text() == "GPU-0003"
        box = page.locator("table.ranks").bounding_box()
        assert box and box["width"] > 50 and box["height"] > 50
        assert page.locator("svg.chart.bars g > rect").count() > 0
        page.locator("#history th", has_text="worst wrong").click()  # sorting still finds its column
        worst = page.locator("#history tbody td:nth-child(12)").all_inner_texts()
        assert worst == sorted(worst, key=lambda text: int(text.replace(",", "")))
        assert seen["console"] == [] and seen["errors"] == []
    finally:
        page.close()


def test_an_empty_report_in_chromium(browser, tmp_path):
    page, seen = open_page(browser, synthetic_report([]), tmp_path / "empty.html")
    try:
        assert "No recorded cases" in page.inner_text("main")
        assert seen["console"] == [] and seen["errors"] == [] and len(seen["requests"]) == 1
    finally:
        page.close()


def test_the_report_of_real_sessions_in_chromium(browser, pytester, examples_dir, tmp_path, monkeypatch):
    """End to end: sessions of a fault-injecting kernel record their history, ``gemmcheck report``
    writes the page, and it draws in the browser: a chart of each kind per case."""
    import textwrap

    from pytest_gemmcheck.cli import main as gemmcheck

    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makepyfile(
        test_tail=textwrap.dedent("""
        import os
        import pytest
        from kernels import FaultInjector, tiled_gemm

        @pytest.mark.parametrize("m", [64, 96])
        def test_tail(gemmcheck, m):
            case = gemmcheck.case("tail", m=m, n=64, k=128, quant="ptpc", tile="32x32")
            x = case.inputs()
            bad = {2, 5} if os.environ["VARIANT"] == "before" else set()
            case.run(FaultInjector(lambda out: tiled_gemm(x, out), "tile", bad, tile=(32, 32)))
    """)
    )
    db = tmp_path / "history.db"
    for variant in ("before", "after", "after"):
        monkeypatch.setenv("VARIANT", variant)
        pytester.runpytest("-p", "no:cacheprovider", f"--gemmcheck-db={db}", f"--gemmcheck-tag={variant}")
    page_path = tmp_path / "report.html"
    assert gemmcheck(["report", "--db", str(db), "--html", str(page_path)]) == 0
    page, seen = open_page_file(browser, page_path)
    try:
        assert seen["console"] == [] and seen["errors"] == [] and seen["requests"] == [page_path.as_uri()]
        assert page.locator("#history tbody tr").count() == 2
        # a heatmap of each case's wrong elements, and one of its elements off the consensus
        for kind, count in (("intervals", 2), ("bars", 2), ("heatmap", 4)):
            charts = page.locator(f"svg.chart.{kind}")
            assert charts.count() == count, kind
            box = charts.first.bounding_box()
            assert box and box["width"] > 50 and box["height"] > 50, (kind, box)
        assert page.locator("figcaption", has_text="elements differing from the consensus").count() == 2
        assert page.locator("figcaption", has_text="Launches of run 1 (before, ").count() == 2
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report-of-sessions.png"), full_page=True)
    finally:
        page.close()
