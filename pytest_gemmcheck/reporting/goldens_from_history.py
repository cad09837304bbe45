"""Goldens from the recorded history (``gemmcheck goldens export``), one entry per case and
scope value, and a line for every case left out and why (a case whose every result was a
regression has no baseline to accept, unless ``--include-bad`` accepts it as known-bad). An
entry it replaces keeps the note a reviewer wrote on it, and where the evidence under that note
changed, the export says so."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from ..history.schema import case_table, results_joined, stack_table
from ..history.queries import case_history
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
        query = (select(*case_table.c["key", "kernel", "m", "n", "k", "quant", "tile", "out_dtype", "fp8", "params"],
                        *stack_table.c["gpu_arch", "fingerprint"])
                 .select_from(results_joined(case_table, stack_table))
                 .where(matched.condition()).distinct())
        groups: dict[tuple[str, str], tuple] = {}
        for row in connection.execute(query):
            groups.setdefault((row.key, scope_value(scope, {"gpu_arch": row.gpu_arch, "fingerprint": row.fingerprint})),
                              row)
    written, left_out, kept = 0, [], []
    for (key, where), row in sorted(groups.items()):
        label = f"{row.kernel} {row.quant} {row.m}x{row.n}x{row.k}" + (f" tile {row.tile}" if row.tile else "")
        history = case_history(engine, key, scope=scope, gpu_arch=row.gpu_arch, fingerprint=row.fingerprint,
                               runs=matched.runs)
        note = f"exported from {history.runs} recorded run{'s' if history.runs != 1 else ''}"
        if not history.processes:
            if not include_bad:
                left_out.append(f"  {label} [{where}]: every recorded result was a regression; --include-bad accepts "
                                "it as known-bad")
                continue
            history = case_history(engine, key, scope=scope, gpu_arch=row.gpu_arch, fingerprint=row.fingerprint,
                                   runs=matched.runs, regressions=True)
            note = f"known-bad: accepted with --include-bad from {history.runs} run{'s' if history.runs != 1 else ''} " \
                   "that were all regressions"
        description = {"kernel": row.kernel, "m": row.m, "n": row.n, "k": row.k, "quant": row.quant, "tile": row.tile,
                       "out_dtype": row.out_dtype, "fp8": row.fp8, "params": row.params}
        evidence = Evidence.of_history(history)
        replaced = store.export(row.kernel, GoldenEntry(key=key, case=description, scope=where, evidence=evidence,
                                                        note=note))
        if replaced is not None:
            kept.append(f'  {label} [{where}]: "{replaced.note}" (was {replaced.evidence.bad}/'
                        f"{replaced.evidence.launches}, now {evidence.bad}/{evidence.launches})")
        written += 1
    lines = [f"wrote {store.write(kernel)}" for kernel in store.kernels()]
    if kept:
        lines += [f"kept the reviewer's note of {len(kept)} entr{'ies' if len(kept) != 1 else 'y'} whose evidence "
                  "changed; read each again:", *kept]
    if not written and not left_out:
        lines.append("no recorded cases match")
    if left_out:
        lines += [f"left out {len(left_out)} case{'s' if len(left_out) != 1 else ''}:", *left_out]
    return lines
