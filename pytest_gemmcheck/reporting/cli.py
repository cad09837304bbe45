"""The ``gemmcheck`` command: questions to the history database, and its upkeep.

    gemmcheck history [--kernel K] [--quant Q] [--tag T] [--case KEY] [--json]
    gemmcheck runs [--limit N]
    gemmcheck db upgrade | current

The database is ``--db`` (a SQLAlchemy URL or a SQLite path), else ``$GEMMCHECK_DB``, else the
nearest ``.gemmcheck/history.db`` in the current directory or its parents. Errors are one
line on stderr with exit status 2 (usage) or 1 (the database cannot be used).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..history.engine import DEFAULT_PATH, ENV_VAR, DatabaseError, is_sqlite, resolve_url, safe_url
from ..config.options import SCOPES
from ..judging.stats import format_percent, rate_upper_bound


def _find_default(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        candidate = folder / DEFAULT_PATH
        if candidate.exists():
            return candidate
    return None


def _database_url(args):
    value = args.db or os.environ.get(ENV_VAR)
    if value:
        return resolve_url(value, Path.cwd())
    found = _find_default(Path.cwd())
    if found is None:
        raise DatabaseError(f"no history database here: no {DEFAULT_PATH} in {Path.cwd()} or its parents "
                            f"(run pytest with gemmcheck cases first, or pass --db / set {ENV_VAR})")
    return resolve_url(str(found), Path.cwd())


def _open_for_reading(args):
    from ..history.engine import open_database
    from ..history.store import HistoryStore

    url = _database_url(args)
    if is_sqlite(url) and not Path(url.database).exists():
        raise DatabaseError(f"no history database at {url.database}")
    engine = open_database(url, auto_upgrade=is_sqlite(url))
    try:  # show runs whose process died as interrupted, not as still running
        HistoryStore(engine).mark_dead_runs_interrupted()
    except Exception:  # a read-only database is still worth reading
        pass
    return engine


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def _rate(bad: int, launches: int) -> str:
    return f"< {format_percent(rate_upper_bound(bad, launches))}" if launches else "-"


def _when(moment) -> str:
    return moment.strftime("%Y-%m-%d %H:%M") if moment is not None else "-"


def cmd_history(args) -> int:
    from ..history import queries

    engine = _open_for_reading(args)
    try:
        if args.case:
            lines = queries.case_runs(engine, args.case, limit=args.limit)
            if args.json:
                print(json.dumps([vars(line) for line in lines], default=str, indent=1))
                return 0
            rows = [[str(l.run_id), _when(l.started_at), l.status, l.tag or "", (l.revision or "")[:10],
                     l.gpu_arch or "cpu", f"{l.bad_launches}/{l.launches}", _rate(l.bad_launches, l.launches),
                     f"{l.worst_wrong:,}", l.verdict, l.kinds] for l in lines]
            print(_table(["run", "started", "status", "tag", "revision", "arch", "bad", "rate (95%)", "worst",
                          "verdict", "kinds"], rows))
            return 0
        summaries = queries.case_summaries(engine, kernel=args.kernel, quant=args.quant, tag=args.tag, limit=args.limit)
        if args.json:
            print(json.dumps([vars(s) for s in summaries], default=str, indent=1))
            return 0
        if not summaries:
            print("no recorded cases match")
            return 0
        rows = [[s.key[:10], s.kernel, s.quant, s.shape, s.tile or "",
                 ",".join(f"{k}={v}" for k, v in sorted(s.params.items())), str(s.runs),
                 f"{s.bad_launches}/{s.launches}", _rate(s.bad_launches, s.launches), f"{s.worst_wrong:,}",
                 s.last_verdict, _when(s.last_recorded), ",".join(s.arches)] for s in summaries]
        print(_table(["case", "kernel", "quant", "shape", "tile", "params", "runs", "bad", "rate (95%)", "worst",
                      "last verdict", "last run", "arch"], rows))
        return 0
    finally:
        engine.dispose()


def cmd_runs(args) -> int:
    from ..history import queries

    engine = _open_for_reading(args)
    try:
        rows = [[str(r[0]), _when(r[1]), _when(r[2]), r[3], r[4] or "", (r[5] or "")[:10] + ("+" if r[6] else ""),
                 str(r[7]), f"{r[9]}/{r[8]}"] for r in queries.runs(engine, limit=args.limit)]
        print(_table(["run", "started", "ended", "status", "tag", "revision", "results", "bad launches"], rows))
        return 0
    finally:
        engine.dispose()


def cmd_db(args) -> int:
    from ..history.engine import create, current_revision, head_revision, upgrade

    url = _database_url(args) if (args.db or os.environ.get(ENV_VAR)) else resolve_url(None, Path.cwd())
    engine = create(url)
    try:
        if args.action == "current":
            current = current_revision(engine)
            head = head_revision()
            state = "no gemmcheck schema" if current is None else f"revision {current}"
            note = "up to date" if current == head else f"head is {head}: run gemmcheck db upgrade"
            print(f"{safe_url(url)}: {state} ({note})")
            return 0
        before, after = upgrade(engine, url)
        print(f"{safe_url(url)}: " + ("already at " + after if before == after else f"upgraded {before or 'empty'} -> {after}"))
        return 0
    finally:
        engine.dispose()


def cmd_goldens_export(args) -> int:
    """Goldens from the recorded history: one entry per case and scope value."""
    from sqlalchemy import select

    from ..history.models import Case, Result, Stack
    from ..history.queries import case_history
    from ..judging.baseline import Evidence
    from ..judging.goldens import GoldenEntry, GoldenStore, scope_value

    engine = _open_for_reading(args)
    store = GoldenStore(Path(args.dir))
    written = 0
    try:
        query = (select(Case, Stack.gpu_arch, Stack.fingerprint).join(Result, Result.case_id == Case.id)
                 .outerjoin(Stack, Stack.id == Result.stack_id).where(Result.verdict != "regression").distinct())
        if args.kernel:
            query = query.where(Case.kernel.like(args.kernel.replace("*", "%")))
        from sqlalchemy.orm import Session

        with Session(engine) as session:
            rows = session.execute(query).all()
            groups: dict[tuple, tuple] = {}
            for case, arch, fingerprint in rows:
                scope = scope_value(args.scope, {"gpu_arch": arch, "fingerprint": fingerprint})
                groups.setdefault((case.key, scope), (case, arch, fingerprint))
            for (key, scope), (case, arch, fingerprint) in sorted(groups.items()):
                rows = case_history(engine, key, scope=args.scope, gpu_arch=arch, fingerprint=fingerprint)
                evidence, runs = Evidence.of_history(rows), rows.runs
                if not evidence.launches:
                    continue
                description = {"kernel": case.kernel, "m": case.m, "n": case.n, "k": case.k, "quant": case.quant,
                               "tile": case.tile, "out_dtype": case.out_dtype, "fp8": case.fp8, "params": case.params}
                store.put(case.kernel, GoldenEntry(key=key, case=description, scope=scope, evidence=evidence,
                                                   note=f"exported from {runs} recorded run{'s' if runs != 1 else ''}"))
                written += 1
        for kernel in store.kernels():
            print(f"wrote {store.write(kernel)}")
        if not written:
            print("no recorded cases match")
        return 0
    finally:
        engine.dispose()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gemmcheck", description="pytest-gemmcheck's history and tools")
    parser.add_argument("--db", help=f"database URL or SQLite path (default: ${ENV_VAR}, else the nearest {DEFAULT_PATH})")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    history = commands.add_parser("history", help="per-case history: launches, bad launches, rates, verdicts")
    history.add_argument("--kernel", help="kernel name (* wildcards)")
    history.add_argument("--quant", help="quant mode")
    history.add_argument("--tag", help="only runs with this tag")
    history.add_argument("--case", help="one case (key or key prefix): its runs, newest first")
    history.add_argument("--limit", type=int, default=200)
    history.add_argument("--json", action="store_true", help="machine-readable output")
    history.set_defaults(func=cmd_history)

    runs = commands.add_parser("runs", help="recent runs")
    runs.add_argument("--limit", type=int, default=20)
    runs.set_defaults(func=cmd_runs)

    db = commands.add_parser("db", help="the database's schema")
    db.add_argument("action", choices=["upgrade", "current"])
    db.set_defaults(func=cmd_db)

    goldens = commands.add_parser("goldens", help="accepted baselines under goldens/")
    golden_commands = goldens.add_subparsers(dest="goldens_command", required=True, metavar="ACTION")
    export = golden_commands.add_parser("export", help="write goldens from the recorded history")
    export.add_argument("--kernel", help="kernel name (* wildcards)")
    export.add_argument("--dir", default="goldens", help="the goldens directory (default: goldens)")
    export.add_argument("--scope", choices=SCOPES, default="arch",
                        help="one entry per GPU arch (default), per stack, or one for all")
    export.set_defaults(func=cmd_goldens_export)

    try:  # the assembly lint is an optional part of the package
        from ..compiled.lint.command import add_lint_parser
    except ImportError:
        pass
    else:
        add_lint_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except DatabaseError as exc:
        print(f"gemmcheck: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
