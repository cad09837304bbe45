"""The LDS-race lint's cost, dataflow engine against the path-enumerating one, in one run.

    python -m benchmarks.lint_scaling [--cap SECONDS]

Every kernel of examples/flydsl/lint_corpus and the committed example assembly is linted by each
engine in a fresh child process, which reports its own time and peak memory (the process's
maximum resident set, interpreter and numpy included). The path engine is stopped at ``--cap``
seconds (default 60) and reported as not finished. Ratios are path / dataflow. Then a K loop of
known trip count shows how each engine grows with the trip count.
"""

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "compiled" / "data"
CORPUS = ROOT / "examples" / "flydsl" / "lint_corpus" / "kernels.py"

CHILD = """
import json, resource, sys, time
from pytest_gemmcheck.compiled.lint import Options, lint_text
text = sys.stdin.read()
start = time.perf_counter()
report = lint_text(text, options=Options(engine=sys.argv[1], time_limit=float(sys.argv[2])))
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "counts": [len(report.of(s)) for s in ("error", "latent", "warning", "unchecked")],
                  "finished": not report.unfinished}))
"""


def measure(text: str, engine: str, cap: float) -> dict | None:
    """One engine on one text in a child process; None when it ran past ``cap`` seconds."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, engine, str(cap)],
            input=text,
            capture_output=True,
            text=True,
            timeout=cap + 5,
            cwd=ROOT,
        )
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1])
    return json.loads(done.stdout)


def corpus() -> dict[str, str]:
    spec = importlib.util.spec_from_file_location("lint_corpus", CORPUS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernels = module.corpus()
    kernels.update({path.stem: path.read_text() for path in sorted(DATA.glob("*.s"))})
    return kernels


def counts(result: dict) -> str:
    errors, latent, warnings, unchecked = result["counts"]
    return f"{errors}e {latent}l {warnings}w {unchecked}u"


def row(name: str, new: dict, old: dict | None, cap: float) -> str:
    head = f"{name:28s} {new['seconds']:7.2f} s {new['rss_mb']:6.0f} MB  {counts(new):14s}"
    if old is None or not old["finished"]:
        return head + f" | did not finish in {cap:g} s"
    return (
        head
        + f" | {old['seconds']:7.2f} s {old['rss_mb']:6.0f} MB  {counts(old):14s}"
        + f" x{old['seconds'] / new['seconds']:.1f} time, x{old['rss_mb'] / new['rss_mb']:.2f} memory"
    )


TRIP_LOOP = """\tv_lshrrev_b32_e32 v1, 6, v0
\tv_lshlrev_b32_e32 v2, 10, v1
\tv_readfirstlane_b32 s8, v2
\tv_and_b32_e32 v3, 63, v0
\tv_lshlrev_b32_e32 v4, 4, v3
\tv_add_u32_e32 v5, 1, v1
\tv_and_b32_e32 v5, 3, v5
\tv_lshlrev_b32_e32 v5, 10, v5
\tv_add_u32_e32 v5, v5, v4
\ts_mov_b32 s12, 0
\ts_mov_b32 m0, s8
\tbuffer_load_dwordx4 v4, s[4:7], s12 offen lds
.LBB0_1:
\ts_add_u32 s13, s8, 0x1000
\ts_mov_b32 m0, s13
\tbuffer_load_dwordx4 v4, s[4:7], s12 offen lds
\ts_waitcnt vmcnt(1)
\ts_barrier
\tds_read_b128 v[8:11], v5
\ts_waitcnt lgkmcnt(0)
\ts_barrier
\ts_mov_b32 m0, s8
\tbuffer_load_dwordx4 v4, s[4:7], s12 offen lds
\ts_waitcnt vmcnt(1)
\ts_barrier
\tds_read_b128 v[12:15], v5 offset:4096
\ts_waitcnt lgkmcnt(0)
\ts_barrier
\ts_add_u32 s12, s12, 1
\ts_cmp_lt_u32 s12, {trips}
\ts_cbranch_scc1 .LBB0_1
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=float, default=60.0, help="seconds the path engine may take per kernel")
    cap = parser.parse_args().cap
    spec = importlib.util.spec_from_file_location("lint_corpus", CORPUS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    print(
        f"{'kernel':28s} {'dataflow: time, peak memory, findings (error latent warning unchecked)':>47s} | "
        "paths: the same, then paths / dataflow"
    )
    for name, text in corpus().items():
        new = measure(text, "dataflow", cap)
        print(row(name, new, measure(text, "paths", cap), cap), flush=True)
    print("K loop of known trip count (4 waves, 2 loads and 2 reads per iteration)")
    for trips in (8, 32, 128):
        text = module.assembly("k", TRIP_LOOP.format(trips=trips), 256)
        print(row(f"{trips} iterations", measure(text, "dataflow", cap), measure(text, "paths", cap), cap), flush=True)


if __name__ == "__main__":
    main()
