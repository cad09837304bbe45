"""``gemmcheck report --html FILE``: the history read into the page's data (html.py draws it).

Per case: its history row (as ``gemmcheck history`` has it), its rate in every run, and one
chosen run's launches with the worst launch's tile maps (wrong elements, and elements off the
consensus where the run recorded them) and its compute-sanitizer runs: the run ``--show-run``
names, else the case's latest run with a bad launch, else its latest run; for a collective case,
also that run's ranks (each one's GPU and bad launches). Launch rows are read for those runs
only.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

from ..history.dashboard import cases, launches_of, results, sanitize_of, worst_tiles_of
from ..history.selection import Selection
from ..judging.stats import rate_interval
from ..records.result import KINDS
from ..records.sanitize import SanitizedLaunch
from .history_table import gpu_text, history_table, worst_verdict
from .html import CaseDetail, CaseRow, LaunchBar, RankRow, Report, RunPoint, TileMap, render, run_label


def _label(row) -> str:
    return run_label(row.run_id, row.tag, row.revision, row.started_at)


def tile_maps(stored: dict | None) -> tuple[TileMap | None, TileMap | None]:
    """The wrong-element map and the differing-element map a result recorded (either may be
    missing: no launch had wrong tiles, no differing launch was mapped)."""
    stored = stored or {}

    def of(data: dict, what: str, count: str) -> TileMap:
        return TileMap(
            m=data["m"],
            n=data["n"],
            tile=tuple(data["tile"]),
            cell=tuple(data["cell"]),
            grid=data["grid"],
            launch=data["launch"],
            wrong=data[count],
            what=what,
        )

    wrong = of(stored, "wrong", "wrong") if "grid" in stored else None
    differing = of(stored["differing"], "differing", "elements") if stored.get("differing") else None
    for tiles, data in ((wrong, stored), (differing, stored.get("differing") or {})):
        if tiles is not None:
            tiles.rank = data.get("rank")  # a collective case's: the rank whose launch it is
    return wrong, differing


def rank_rows(stored: list[dict] | None, launches: list[LaunchBar]) -> list[RankRow]:
    """A collective result's ranks (its ``per_rank``), each with the kinds of its launches."""
    kinds: dict[int, set[str]] = {}
    for launch in launches:
        if launch.rank is not None:
            kinds.setdefault(launch.rank, set()).update(launch.kinds)
    return [
        RankRow(
            rank=int(entry["rank"]),
            gpu=gpu_text(entry.get("device"), entry.get("device_uuid")),
            launches=int(entry["launches"]),
            bad=int(entry["bad_launches"]),
            kinds=[kind for kind in KINDS if kind in kinds.get(int(entry["rank"]), ())],
        )
        for entry in stored or ()
    ]


def build_report(engine, selection: Selection, *, database: str, run: int | None = None) -> Report:
    table = history_table(engine, selection)
    per_case: dict[str, dict[int, list]] = defaultdict(dict)  # key -> run -> its results
    keys = {record["key"] for record in table.records}
    rows = results(engine, selection)
    with engine.connect() as connection:
        infos = cases(connection, {row.case_id for row in rows})
    for row in rows:
        key = infos[row.case_id].key
        if key in keys:
            per_case[key].setdefault(row.run_id, []).append(row)
    case_rows, details = [], []
    for record in table.records:
        case_row = CaseRow(
            key=record["key"],
            kernel=record["kernel"],
            quant=record["quant"],
            shape=record["shape"],
            tile=record["tile"],
            params=record["params"],
            runs=record["runs"],
            launches=record["launches"],
            bad_launches=record["bad_launches"],
            rate_low=record["rate_low"],
            rate_high=record["rate_high"],
            worst_wrong=record["worst_wrong"],
            last_verdict=record["verdict"],
            last_bad=record["last_bad"],
            trend=[tuple(t) for t in record["trend"]],
            worst_differing=record["worst_differing"],
            hazards=record["hazards"],
            collective=record.get("collective"),
            world_size=record.get("world_size"),
            ranks={int(rank): (counts["bad_launches"], counts["launches"]) for rank, counts in record["ranks"].items()}
            if record.get("ranks")
            else None,
        )
        case_rows.append(case_row)
        series = []
        by_run = per_case.get(record["key"], {})
        for run_id in sorted(by_run):
            found = by_run[run_id]
            bad, launches = sum(r.bad_launches for r in found), sum(r.launches for r in found)
            low, high = rate_interval(bad, launches)
            series.append(
                RunPoint(
                    run_id=run_id,
                    started_at=found[0].started_at,
                    label=_label(found[0]),
                    bad=bad,
                    launches=launches,
                    low=low,
                    high=high,
                    verdict=worst_verdict(r.verdict for r in found),
                )
            )
        chosen = _chosen_run(by_run, run)
        launches: list[LaunchBar] = []
        tiles = differing = None
        sanitizer: list[str] = []
        ranks: list[RankRow] = []
        if chosen is not None:
            worst = max(by_run[chosen], key=lambda r: (r.worst_wrong, r.worst_differing or 0, r.bad_launches))
            launches = [
                LaunchBar(
                    index=launch.index,
                    wrong=launch.wrong,
                    nonfinite=launch.nonfinite,
                    differing=launch.differing,
                    kinds=[kind for kind in launch.kinds.split(",") if kind],
                    rank=launch.rank,
                )
                for launch in launches_of(engine, worst.id)
            ]
            ranks = rank_rows(worst.per_rank, launches)
            tiles, differing = tile_maps(worst_tiles_of(engine, worst.id))
            sanitizer = [
                SanitizedLaunch.from_dict(data).summary()
                for runs in sanitize_of(engine, [r.id for r in by_run[chosen]]).values()
                for data in runs
            ]
        details.append(
            CaseDetail(
                row=case_row,
                series=series,
                run_id=chosen,
                launches=launches,
                tiles=tiles,
                differing=differing,
                sanitizer=sanitizer,
                ranks=ranks,
            )
        )
    return Report(
        title="gemmcheck report",
        generated_at=datetime.now(timezone.utc),
        database=database,
        selection=selection.describe,
        cases=case_rows,
        details=details,
    )


def _chosen_run(by_run: dict[int, list], wanted: int | None) -> int | None:
    if wanted is not None:
        return wanted if wanted in by_run else None
    with_bad = [run_id for run_id, found in by_run.items() if any(r.bad_launches for r in found)]
    if with_bad:
        return max(with_bad)
    return max(by_run) if by_run else None


def write_report(engine, selection: Selection, path: Path, *, database: str, run: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(build_report(engine, selection, database=database, run=run)), encoding="utf-8")
    return path
