"""The tables of ``gemmcheck coverage``: which configurations ran on which stacks, and which did
not.

The matrix has a row per configuration (kernel, quant, tile, shape, params) and a column per
stack (GPU arch, torch, runtime), each cell its launches and the worst result's bad-launch
rate. The input space is what the suites declared: the values each axis took for a kernel in
the history. A gap is a configuration one axis away from one that ran on a stack (another
quant, tile, shape, or one param's other value, all seen with that kernel) that never ran on
that stack: "mxfp8 with the 256x128 tile" when mxfp8 ran with 256x256 and ptpc with 256x128.
"""

from __future__ import annotations

import json
from collections import defaultdict

from ..history.dashboard import cell_totals
from ..history.selection import Selection
from .tables import Table, params_text

AXES = ("quant", "tile", "shape")


def _config(info) -> tuple:
    return (info.kernel, info.quant, info.tile or "", info.shape, json.dumps(info.params, sort_keys=True, default=str))


def _config_text(config: tuple) -> str:
    kernel, quant, tile, shape, params = config
    text = f"{kernel} {quant} {shape}" + (f" tile {tile}" if tile else "")
    params = json.loads(params)
    return text + (f" {params_text(params)}" if params else "")


def _stack_text(stack: tuple[str, str, str]) -> str:
    """'sm_90, torch 2.11, cuda 12.8'; 'cpu, torch 2.13.0+cpu' (a CPU stack's runtime is its arch)."""
    arch, torch, runtime = stack
    parts = [arch, f"torch {torch}"]
    if runtime != "cpu":
        parts.append(runtime)
    return ", ".join(parts)


def _stack_record(stack: tuple[str, str, str]) -> dict:
    arch, torch, runtime = stack
    return {"gpu_arch": arch, "torch": None if torch == "?" else torch, "runtime": runtime}


def _config_record(config: tuple) -> dict:
    kernel, quant, tile, shape, params = config
    m, n, k = (int(part) for part in shape.split("x"))
    return {
        "kernel": kernel,
        "quant": quant,
        "tile": tile or None,
        "m": m,
        "n": n,
        "k": k,
        "shape": shape,
        "params": json.loads(params),
    }


def _neighbours(config: tuple, values: dict[str, set]) -> list[tuple[tuple, str]]:
    """Configurations one axis away, with the axis changed: (configuration, 'quant ptpc -> mxfp8')."""
    kernel, quant, tile, shape, params_json = config
    own = {"quant": quant, "tile": tile, "shape": shape}
    found = []
    for axis in AXES:
        for value in sorted(values[axis] - {own[axis]}):
            changed = dict(own, **{axis: value})
            found.append(
                (
                    (kernel, changed["quant"], changed["tile"], changed["shape"], params_json),
                    f"{axis} {own[axis] or 'none'} -> {value or 'none'}",
                )
            )
    params = json.loads(params_json)
    for key in sorted(k for k in values if k.startswith("param:")):
        name = key[len("param:") :]
        current = json.dumps(params.get(name), sort_keys=True)
        for value in sorted(values[key] - {current}):
            changed = dict(params)
            decoded = json.loads(value)
            if decoded is None:
                changed.pop(name, None)
            else:
                changed[name] = decoded
            found.append(
                (
                    (kernel, quant, tile, shape, json.dumps(changed, sort_keys=True, default=str)),
                    f"{name} {current} -> {value}",
                )
            )
    return found


def coverage_tables(engine, selection: Selection) -> tuple[Table, Table]:
    cells, infos, stacks = cell_totals(engine, selection)

    def stack_of(stack_id) -> tuple[str, str, str]:
        stack = stacks.get(stack_id)
        return (stack.gpu_arch or "cpu", stack.torch or "?", stack.runtime) if stack else ("unknown", "?", "?")

    matrix: dict[tuple, dict[tuple, list]] = defaultdict(dict)  # config -> stack -> [launches, bad, worst rate]
    for cell in cells:
        entry = matrix[_config(infos[cell.case_id])].setdefault(stack_of(cell.stack_id), [0, 0, 0.0])
        entry[0] += cell.launches
        entry[1] += cell.bad_launches
        entry[2] = max(entry[2], cell.worst_rate)
    columns = sorted({stack for per_stack in matrix.values() for stack in per_stack})
    headers = ["configuration", *[_stack_text(stack) for stack in columns]]
    rows, records = [], []
    for config in sorted(matrix):
        per_stack = matrix[config]
        row = [_config_text(config)]
        for stack in columns:
            entry = per_stack.get(stack)
            row.append(f"{entry[0]:,} · {100 * entry[2]:.0f}%" if entry else "—")
        rows.append(row)
        # one record per configuration and stack that ran it: both as values, never as keys
        records += [
            {
                **_config_record(config),
                "stack": _stack_record(stack),
                "launches": e[0],
                "bad_launches": e[1],
                "worst_rate": e[2],
            }
            for stack, e in sorted(per_stack.items())
        ]
    matrix_table = Table(
        headers,
        rows,
        records=records,
        title="coverage: launches · worst result's bad-launch rate",
        empty="no recorded cases match",
        name="matrix",
    )

    values: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))  # kernel -> axis -> values
    for kernel, quant, tile, shape, params_json in matrix:
        axes = values[kernel]
        axes["quant"].add(quant)
        axes["tile"].add(tile)
        axes["shape"].add(shape)
        for name, value in json.loads(params_json).items():
            axes[f"param:{name}"].add(json.dumps(value, sort_keys=True))
    for kernel, quant, tile, shape, params_json in matrix:  # a param some configurations lack: its absence is a value
        for key in [k for k in values[kernel] if k.startswith("param:")]:
            if key[len("param:") :] not in json.loads(params_json):
                values[kernel][key].add("null")
    gaps: dict[tuple, list[tuple[tuple, str]]] = defaultdict(list)  # (config, stack) -> neighbours that ran, how
    for config, per_stack in matrix.items():
        for stack in per_stack:
            for neighbour, how in _neighbours(config, values[config[0]]):
                if stack not in matrix.get(neighbour, {}):
                    gaps[(neighbour, stack)].append((config, how))
    gap_rows, gap_records = [], []
    for (config, stack), ran in sorted(gaps.items()):
        elsewhere = sorted(_stack_text(s) for s in matrix.get(config, {}))
        first = f"{_config_text(ran[0][0])} ({ran[0][1]})"
        gap_rows.append(
            [
                _config_text(config),
                _stack_text(stack),
                first + (f" and {len(ran) - 1} more" if len(ran) > 1 else ""),
                "; ".join(elsewhere) or "no stack",
            ]
        )
        gap_records.append(
            {
                **_config_record(config),
                "stack": _stack_record(stack),
                "neighbours_ran": [{**_config_record(other), "differs": how} for other, how in ran],
                "ran_on": [_stack_record(s) for s in sorted(matrix.get(config, {}))],
            }
        )
    gap_table = Table(
        ["never ran", "on", "neighbours that ran there", "ran on"],
        gap_rows,
        records=gap_records,
        title="gaps: configurations one axis from one that ran, that never ran on its stack",
        empty="no gaps: every neighbour of a configuration that ran also ran on its stacks",
        name="gaps",
    )
    return matrix_table, gap_table
