"""The tables of ``gemmcheck explain CASE``: over a case's whole history, which recorded fact
explains its bad launches -- a stack field (torch, CUDA/HIP, driver, Triton, FlyDSL, host, GPU
model, any field a hook added), the physical GPU, the stress setting, a collective case's rank,
the process, or the case's own params across its sibling cases (same kernel). The statistics
are judging/explanation.py's; this module reads the rows (history/queries.py) into its groups
and words the explanation as a verdict and a table of value tests. A collective case's launches
cluster by rank within a result (a rank is a process), where others cluster by result."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from ..config.table import DEFAULTS
from ..history.queries import kernel_launches
from ..history.schema import case_table
from ..history.selection import SelectionError
from ..judging.explanation import GPU_UUID, PROCESS, RANK, STRESS, Explanation, Group, explain, p_text
from ..records.result import collective_words
from .tables import Table

# stack columns as factors, by the name a reader knows them by
STACK_FACTORS = (
    ("torch", "torch"),
    ("cuda", "cuda"),
    ("hip", "hip"),
    ("driver", "driver"),
    ("triton", "triton"),
    ("flydsl", "flydsl"),
    ("host", "host"),
    ("gpu", "gpu_name"),
    ("gpu_arch", "gpu_arch"),
    ("python", "python"),
    ("os", "os"),
)
NONE = "(none)"


def resolve_case(engine, prefix: str) -> dict[str, Any]:
    """The one case whose key is ``prefix`` or starts with it (as ``history --case`` matches)."""
    with engine.connect() as connection:
        columns = case_table.c[
            "id", "key", "kernel", "quant", "tile", "m", "n", "k", "params", "collective", "world_size"
        ]
        rows = connection.execute(select(columns)).all()
    exact = [row for row in rows if row.key == prefix]
    found = exact or [row for row in rows if row.key.startswith(prefix)]
    if not found:
        raise SelectionError(f"no recorded case has a key starting with {prefix!r} (gemmcheck history lists them)")
    if len(found) > 1:
        listed = ", ".join(sorted(f"{row.key[:12]} ({row.kernel})" for row in found)[:8])
        raise SelectionError(
            f"{prefix!r} matches {len(found)} cases: {listed}{' ...' if len(found) > 8 else ''}; give more of the key"
        )
    row = found[0]
    case = {
        "id": row.id,
        "key": row.key,
        "kernel": row.kernel,
        "quant": row.quant,
        "tile": row.tile,
        "shape": f"{row.m}x{row.n}x{row.k}",
        "params": row.params or {},
    }
    if row.collective:
        case.update(collective=row.collective, world_size=row.world_size)
    return case


def _text(value: Any) -> str:
    if value is None or value == "":
        return NONE
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _stress(stress: dict | None) -> str:
    if not stress or not stress.get("kind") or stress.get("kind") == "none":
        return "none"
    return str(stress["kind"]) if stress.get("active", True) else f"{stress['kind']} (not started)"


def _case_facts(case: dict, names: list[str]) -> dict[str, str]:
    facts = {"tile": case["tile"] or "none", "quant": case["quant"], "shape": f"{case['m']}x{case['n']}x{case['k']}"}
    for name in names:
        facts[f"param:{name}"] = _text(case["params"][name]) if name in case["params"] else "(unset)"
    return facts


def gather(engine, case: dict) -> tuple[list[Group], list[Group], dict[str, Any]]:
    """(the case's own launch groups with their stack, GPU, stress and process facts; the launch
    groups of the kernel's cases with their case facts; counts for the heading)."""
    data = kernel_launches(engine, case["kernel"])
    param_names = sorted({name for info in data.cases.values() for name in info["params"]})
    per_result: dict[int, list[tuple]] = {}
    for result_id, host, pid, uuid, rank, count, bad in data.groups:
        per_result.setdefault(result_id, []).append((host, pid, uuid, rank, count, bad))
    own, kernel = [], []
    runs: set[int] = set()
    for result_id, result in sorted(data.results.items()):
        rows = per_result.get(result_id) or [(None, None, None, None, result["launches"], result["bad_launches"])]
        stack = data.stacks.get(result["stack_id"], {})
        info = data.cases[result["case_id"]]
        for host, pid, uuid, rank, count, bad in rows:
            if not count:
                continue
            where = host or stack.get("host")
            origin = (result_id, host, pid, uuid, rank)
            cluster = result_id if rank is None else (result_id, rank)  # a rank is a process
            kernel.append(
                Group(
                    bad,
                    count,
                    _case_facts(info, param_names),
                    cluster=cluster,
                    host=where,
                    stack=result["stack_id"],
                    case=info["key"],
                    origin=origin,
                )
            )
            if result["case_id"] != case["id"]:
                continue
            runs.add(result["run_id"])
            facts = {name: _text(stack.get(column)) for name, column in STACK_FACTORS}
            if facts["host"] == NONE and host:
                facts["host"] = host
            for name, value in (stack.get("extra") or {}).items():
                facts.setdefault(name, _text(value))
            facts[GPU_UUID] = uuid or NONE
            if rank is not None:
                facts[RANK] = str(rank)
            facts[STRESS] = _stress(result["stress"])
            facts[PROCESS] = f"{where or '?'}:{pid if pid is not None else '?'} (run {result['run_id']})"
            own.append(
                Group(
                    bad,
                    count,
                    facts,
                    cluster=cluster,
                    host=where,
                    stack=result["stack_id"],
                    case=info["key"],
                    origin=origin,
                )
            )
    if len({g.case for g in kernel}) < 2:
        kernel = []  # no sibling case: nothing to compare the params with
    return own, kernel, {"runs": len(runs), "sibling_cases": len({g.case for g in kernel}) - 1 if kernel else 0}


def explain_case(
    engine, prefix: str, *, alpha: float = DEFAULTS.alpha
) -> tuple[dict[str, Any], Explanation, dict[str, Any]]:
    case = resolve_case(engine, prefix)
    own, kernel, counts = gather(engine, case)
    return case, explain(own, kernel, alpha=alpha), counts


def heading(case: dict, explanation: Explanation, counts: dict) -> str:
    tile = f" tile {case['tile']}" if case["tile"] else ""
    params = "".join(f" {k}={v}" for k, v in sorted(case["params"].items()))
    if case.get("collective"):
        params += f" {collective_words(case['collective'], case['world_size'])}"
    return (
        f"{case['key'][:10]} {case['kernel']} {case['quant']} {case['shape']}{tile}{params}: "
        f"{explanation.bad}/{explanation.launches} bad launches over {counts['runs']} "
        f"run{'s' if counts['runs'] != 1 else ''}, {counts['sibling_cases']} sibling case"
        f"{'s' if counts['sibling_cases'] != 1 else ''}"
    )


def tables(case: dict, explanation: Explanation, counts: dict) -> list[Table]:
    verdict = Table(["verdict"], [[line] for line in explanation.verdict], title=heading(case, explanation, counts))
    shown = [t for t in explanation.tests if t.names != (PROCESS,) or t.significant]
    hidden = len(explanation.tests) - len(shown)
    rows = [
        [
            t.factor,
            t.value,
            f"{t.bad}/{t.launches}",
            f"{t.rest_bad}/{t.rest_launches}",
            p_text(t.p_adjusted).removeprefix("p = "),
            "yes" if t.significant else "",
            "case" if t.population == "case" else "kernel",
        ]
        for t in shown
    ]
    clusters = "results (of its ranks)" if case.get("collective") else "results"
    notes = (
        [
            f"p: one-sided Fisher exact test of the value's bad-launch rate against the rest, each side's launches "
            f"divided by the design effect of its {clusters}; Holm-corrected over all {len(explanation.tests)} value "
            f"tests; significant below {explanation.alpha:g}"
        ]
        if explanation.tests
        else []
    )
    if hidden:
        notes.append(f"{hidden} process{'es' if hidden != 1 else ''} that do not stand out left out")
    same = [f"{name}={value}" for name, value in sorted(explanation.constant.items()) if value != NONE]
    unknown = [name for name, value in sorted(explanation.constant.items()) if value == NONE]
    if same:
        notes.append("the same throughout (no evidence either way): " + ", ".join(same))
    if unknown:
        notes.append("not recorded: " + ", ".join(unknown))
    factors = Table(
        ["factor", "value", "bad", "rest", "p (Holm)", "significant", "over"],
        rows,
        notes=notes,
        records=[t.record() for t in shown],
        empty="no factor takes two values in this history",
    )
    return [verdict, factors]


def document(case: dict, explanation: Explanation, counts: dict) -> dict[str, Any]:
    """What --format json gives."""
    return {
        "case": case,
        "bad_launches": explanation.bad,
        "launches": explanation.launches,
        "runs": counts["runs"],
        "sibling_cases": counts["sibling_cases"],
        "verdict": explanation.verdict,
        "explained_by": explanation.explained_by.record() if explanation.explained_by else None,
        "also": [t.record() for t in explanation.also],
        "per_process": explanation.per_process,
        "alpha": explanation.alpha,
        "correction": "holm",
        "constant": explanation.constant,
        "tests": [t.record() for t in explanation.tests],
    }
