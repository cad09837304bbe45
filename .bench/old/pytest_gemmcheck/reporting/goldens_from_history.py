"""Goldens from the recorded history (``gemmcheck goldens export``), one entry per case and
scope value, and a line for every case left out and why (a case whose every result was a
regression has no baseline to accept, unless ``--include-bad`` accepts it as known-bad). An
entry it replaces keeps the note a reviewer wrote on it, and where the evidence under that note
changed, the export says so."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from ..history.dashboard import cases
from ..history.queries import case_history
from ..history.schema import result_table, results_joined, stack_table
from ..history.selection import Selection, match
from ..judging.baseline import Evidence
from ..judging.goldens import GoldenEntry, GoldenStore, scope_value


class GoldensFolderError(ValueError):
    """``--dir`` names no folder the goldens can be written in."""


def check_folder(folder: Path) -> None:
    """``--dir``: a folder, or a path whose nearest existing part is one (the rest is made)."""
    for part in (folder, *folder.parents):
        if part.exists():
            if not part.is_dir():
                raise GoldensFolderError(f"--dir {folder}: {part} is not a directory")
            return


def export_goldens(engine, selection: Selection, folder: Path, *, scope: str, include_bad: bool) -> list[str]:
    """Write the goldens; the lines to print (files written, cases left out)."""
    store = GoldenStore(folder)
    with engine.connect() as connection:
        matched = match(connection, selection)
        if matched.empty:
            return ["no recorded cases match"]
        # the distinct (case, stack) pairs, then the cases: PostgreSQL has no DISTINCT over a json column (params)
        query = (
            select(result_table.c.case_id, *stack_table.c["gpu_arch", "fingerprint"])
            .select_from(results_joined(stack_table))
            .where(matched.condition())
            .distinct()
            .order_by(result_table.c.case_id, stack_table.c.gpu_arch, stack_table.c.fingerprint)
        )
        places = connection.execute(query).all()
        infos = cases(connection, {case_id for case_id, _, _ in places})
    groups: dict[tuple[str, str], tuple] = {}
    for case_id, gpu_arch, stack_fingerprint in places:
        info = infos[case_id]
        where = scope_value(scope, {"gpu_arch": gpu_arch, "fingerprint": stack_fingerprint})
        groups.setdefault((info.key, where), (info, gpu_arch, stack_fingerprint))
    written, left_out, kept = 0, [], []
    for (key, where), (case, gpu_arch, stack_fingerprint) in sorted(groups.items(), key=lambda item: item[0]):
        label = f"{case.kernel} {case.quant} {case.m}x{case.n}x{case.k}" + (f" tile {case.tile}" if case.tile else "")
        history = case_history(
            engine, key, scope=scope, gpu_arch=gpu_arch, fingerprint=stack_fingerprint, runs=matched.runs
        )
        note = f"exported from {history.runs} recorded run{'s' if history.runs != 1 else ''}"
        if not history.processes:
            if not include_bad:
                left_out.append(
                    f"  {label} [{where}]: every recorded result was a regression; --include-bad accepts "
                    "it as known-bad"
                )
                continue
            history = case_history(
                engine,
                key,
                scope=scope,
                gpu_arch=gpu_arch,
                fingerprint=stack_fingerprint,
                runs=matched.runs,
                regressions=True,
            )
            note = (
                f"known-bad: accepted with --include-bad from {history.runs} "
                f"run{'s' if history.runs != 1 else ''} that were all regressions"
            )
        description = {
            "kernel": case.kernel,
            "m": case.m,
            "n": case.n,
            "k": case.k,
            "quant": case.quant,
            "tile": case.tile,
            "out_dtype": case.out_dtype,
            "fp8": case.fp8,
            "params": case.params,
        }
        if case.collective:
            description.update(collective=case.collective, world_size=case.world_size)
        evidence = Evidence.of_history(history)
        replaced = store.export(
            case.kernel, GoldenEntry(key=key, case=description, scope=where, evidence=evidence, note=note)
        )
        if replaced is not None:
            kept.append(
                f'  {label} [{where}]: "{replaced.note}" (was {replaced.evidence.bad}/'
                f"{replaced.evidence.launches}, now {evidence.bad}/{evidence.launches})"
            )
        written += 1
    lines = [f"wrote {store.write(kernel)}" for kernel in store.kernels()]
    if kept:
        lines += [
            f"kept the reviewer's note of {len(kept)} entr{'ies' if len(kept) != 1 else 'y'} whose evidence "
            "changed; read each again:",
            *kept,
        ]
    if not written and not left_out:
        lines.append("no recorded cases match")
    if left_out:
        lines += [f"left out {len(left_out)} case{'s' if len(left_out) != 1 else ''}:", *left_out]
    return lines
