"""Every Triton kernel configuration the plugin launches on an AMD GPU (recorded from its own
launching code by amd_kernels.py: the check for each out dtype, shape class, tile, floor and
checksum setting, the consensus comparison, the repeat pass, the guards for every quant mode and
fp8 flavour, the stress loops, the seeded operands' generator) compiles for gfx942 (MI300) and
gfx950 (MI355X) through Triton's own AMD backend, with no GPU, to amdgcn and a hsaco for
wavefronts of 64; and its assembly goes through ``gemmcheck lint``.

What the lint says (docs/amd.md): no error and no latent finding in any configuration, and
every configuration it finishes within its time limit (amd_kernels.LINT_TIME_LIMIT_S) is clean. It does
not finish (``unchecked``) the per-tile counts: those are linted for
amd_kernels.LONG_SHOT_LIMIT_S only, and what it reaches must hold no error. This test holds
those lines: an error, a finding in a finished kernel, or an unfinished kernel of another kind
fails it.

The work is split into parts (every PARTS-th configuration), which pytest-xdist's workers run
side by side; each part records every configuration again (a few seconds) and compiles and
lints its own, in a fresh process (the kernels are defined for the interpreter in this one).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from amd_kernels import known_unfinished

DRIVER = Path(__file__).with_name("amd_kernels.py")
PACKAGE = Path(__file__).resolve().parents[3] / "pytest_gemmcheck"
ARCHS = ("gfx942", "gfx950")
PARTS = 4

pytestmark = pytest.mark.slow  # minutes of compiling and linting on two cores


def _is_jit(decorator) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "jit"


def entry_kernels() -> set[str]:
    """The plugin's Triton kernels that are launched, not called: every ``@triton.jit``
    function of the package that no other jit function calls."""
    jitted: dict[str, ast.FunctionDef] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(_is_jit(d) for d in node.decorator_list):
                jitted[node.name] = node
    called = {
        call.func.id
        for function in jitted.values()
        for call in ast.walk(function)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
    }
    return set(jitted) - called


@pytest.mark.parametrize("part", range(PARTS))
@pytest.mark.parametrize("arch", ARCHS)
def test_every_configuration_compiles_for_amd_and_lints(arch, part, tmp_path):
    if importlib.util.find_spec("triton") is None or importlib.util.find_spec("triton.backends.amd") is None:
        pytest.skip("no Triton with its AMD backend")
    env = {key: value for key, value in os.environ.items() if key != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = str(tmp_path / "triton-cache")  # compiled here, not found in a cache
    done = subprocess.run(
        [
            sys.executable,
            str(DRIVER),
            "--arch",
            arch,
            "--jobs",
            "1",
            "--part",
            f"{part}/{PARTS}",
            "--keep",
            str(tmp_path / "asm"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=3600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout)
    outcomes = report["outcomes"]
    assert set(report["kernels"]) == entry_kernels()  # every kernel the plugin launches was recorded
    assert len(outcomes) == len(range(part, report["requests"], PARTS)) > 0
    refused = [(o["kernel"], o["constexprs"], o["error"]) for o in outcomes if not o["compiled"]]
    assert refused == []
    assert all({"amdgcn", "hsaco"} <= set(o["stages"]) and o["warp_size"] == 64 for o in outcomes)
    lint = [(o["kernel"], o["asm"], o["lint"]) for o in outcomes]
    assert [entry for entry in lint if "error" in entry[2] or entry[2]["errors"] or entry[2]["latent"]] == []
    unfinished = [o for o in outcomes if o["lint"]["unfinished"]]
    assert [
        (o["kernel"], o["asm"], o["lint"])
        for o in outcomes
        if not o["lint"]["unfinished"] and (o["lint"]["warnings"] or o["lint"]["unchecked"])
    ] == []
    assert [(o["kernel"], o["divisible_by_16"]) for o in unfinished if not known_unfinished(o["kernel"])] == []
    compile_s = sum(o["compile_s"] for o in outcomes)
    lint_s = sum(o["lint_s"] for o in outcomes)
    print(
        f"{arch} part {part}/{PARTS}: {len(outcomes)} of {report['requests']} configurations, compiled in "
        f"{compile_s:.0f} s, linted in {lint_s:.0f} s ({len(unfinished)} unfinished), {report['wall_s']:.0f} s "
        "in all"
    )
