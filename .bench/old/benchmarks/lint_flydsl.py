"""The LDS-race lint on the kernels of a FlyDSL checkout: compile each, compile-only, and lint it.

    python -m benchmarks.lint_flydsl PATH [--arch gfx950 --arch gfx942] [--kernel NAME ...]
        [--keep-asm DIR] [--json FILE] [--timeout SECONDS] [--time-limit SECONDS] [--device-libs DIR]

PATH is a FlyDSL source checkout (the directory holding ``kernels/``); its kernels are built by
the default configurations of ``gemmcheck_dev/flydsl_kernel_builders.py`` with the installed FlyDSL, for
each ``--arch`` (default gfx950 and gfx942), without a GPU. Every compiled kernel is linted by
``python -m pytest_gemmcheck.compiled.lint`` in a child process of its own, so its wall time and
peak resident memory (``os.wait4``'s ``ru_maxrss`` of that child: the interpreter and numpy
included) are the lint's alone; the child is killed after ``--timeout`` seconds, and the lint's
own ``--time-limit`` is passed on. One line per kernel and arch: seconds, peak MB, errors /
latent / warnings / unchecked findings and the exit status (0 clean, 1 errors, 3 unchecked),
with the number of notes (DS-write pairs the addresses did not decide) where there are any, or
why it did not compile.

``--keep-asm DIR`` writes each compiled kernel as ``DIR/<arch>/<name>.s``. Kernels that call the
device math library (ocml/ockl: paged attention, for one) need its bitcode: ``--device-libs DIR``
names a directory holding ``ocml.bc`` and ``ockl.bc`` (a ROCm install's ``amdgcn/bitcode``; by
default the copy Triton's AMD backend ships is used when it is installed).
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gemmcheck_dev.flydsl_kernel_builders import BUILDERS
from pytest_gemmcheck.compiled.flydsl.compile import compile_spec, find_linker

ROOT = Path(__file__).resolve().parents[1]

SPEC = str(ROOT / "gemmcheck_dev" / "flydsl_kernel_builders.py") + ":spec"
STATUS = {0: "pass", 1: "errors", 3: "unchecked"}


def default_device_libs() -> str | None:
    try:
        import importlib.util

        spec = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    lib = Path(list(spec.submodule_search_locations)[0]) / "backends" / "amd" / "lib"
    return str(lib) if (lib / "ocml.bc").is_file() and (lib / "ockl.bc").is_file() else None


def toolkit_with_device_libs(libs: str, work: Path) -> str:
    """A ROCm-shaped root (``llvm/bin/ld.lld``, ``amdgcn/bitcode/*.bc``) for FlyDSL's backend."""
    linker = find_linker()
    if linker is None:
        raise SystemExit("no ld.lld 18+ found")
    root = work / "rocm"
    (root / "llvm" / "bin").mkdir(parents=True, exist_ok=True)
    (root / "amdgcn" / "bitcode").mkdir(parents=True, exist_ok=True)
    link = root / "llvm" / "bin" / "ld.lld"
    if not link.exists():
        link.symlink_to(os.path.realpath(linker))
    for bc in Path(libs).glob("*.bc"):
        target = root / "amdgcn" / "bitcode" / bc.name
        if not target.exists():
            target.symlink_to(bc.resolve())
    return str(root)


def lint_child(path: str, timeout: float, time_limit: float) -> dict:
    """Lint one file in a child process; its wall time, peak RSS, findings and exit status."""
    command = [
        sys.executable,
        "-m",
        "pytest_gemmcheck.compiled.lint",
        "--format",
        "json",
        "--time-limit",
        str(time_limit),
        path,
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    out = tempfile.TemporaryFile()
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
    timed_out = False
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - start > timeout:
            child.send_signal(signal.SIGKILL)
            pid, status, usage = os.wait4(child.pid, 0)
            timed_out = True
            break
        time.sleep(0.02)
    child.returncode = os.waitstatus_to_exitcode(status)  # the child is reaped: keep Popen from waiting
    seconds = time.perf_counter() - start
    out.seek(0)
    text = out.read().decode("utf-8", "replace")
    result = {
        "seconds": round(seconds, 2),
        "peak_mb": round(usage.ru_maxrss / 1024, 1),
        "exit": None if timed_out else child.returncode,
        "timed_out": timed_out,
    }
    if timed_out:
        return result
    try:
        report = json.loads(text[text.index("{") :])
    except ValueError:
        result["failure"] = text.strip().splitlines()[-1] if text.strip() else "no output"
        return result
    result.update({key: report[key] for key in ("errors", "latent", "warnings", "unchecked")})
    result["notes"] = sum(f["severity"] == "note" for file in report.get("files", []) for f in file.get("findings", []))
    result["unfinished"] = report.get("unfinished", [])
    result["incomplete"] = sum(len(f.get("incomplete", [])) for f in report.get("files", []))
    return result


def run(args) -> list[dict]:
    names = args.kernel or list(BUILDERS)
    unknown = [n for n in names if n not in BUILDERS]
    if unknown:
        raise SystemExit(f"no builder {', '.join(unknown)}; there are {', '.join(BUILDERS)}")
    work = Path(tempfile.mkdtemp(prefix="gemmcheck-lint-flydsl-"))
    saved_rocm = os.environ.get("ROCM_PATH")
    libs = args.device_libs if args.device_libs is not None else default_device_libs()
    if libs:
        os.environ["ROCM_PATH"] = toolkit_with_device_libs(libs, work)
    rows = []
    try:
        for arch in args.arch:
            for name in names:
                rows.extend(one_kernel(name, arch, args, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if saved_rocm is None:
            os.environ.pop("ROCM_PATH", None)
        else:
            os.environ["ROCM_PATH"] = saved_rocm
    return rows


def one_kernel(name: str, arch: str, args, work: Path) -> list[dict]:
    config = BUILDERS[name][2]
    start = time.perf_counter()
    compiled = compile_spec(
        SPEC,
        {"kernel": name, "root": os.path.abspath(args.path)},
        arch=arch,
        keep_dir=str(work / f"{arch}-{name}"),
        timeout=args.compile_timeout,
    )
    compile_seconds = round(time.perf_counter() - start, 1)
    base = {"kernel": name, "arch": arch, "config": config, "compile_seconds": compile_seconds}
    if not compiled.ok:
        row = {**base, "compiled": False, "reason": compiled.error}
        print_row(row)
        return [row]
    rows = []
    for asm in compiled.assembly:
        label = name if len(compiled.assembly) == 1 else f"{name}.{asm.kernel}"
        path = asm.path
        if args.keep_asm:
            target = Path(args.keep_asm) / arch / f"{label}.s"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(asm.text, encoding="utf-8")
            path = str(target)
        row = {
            **base,
            "kernel": label,
            "compiled": True,
            "symbol": asm.kernel,
            "lines": asm.text.count("\n"),
            **lint_child(path, args.timeout, args.time_limit),
        }
        print_row(row)
        rows.append(row)
    return rows


HEADER = (
    f"{'kernel':<30} {'arch':<7} {'lines':>6} {'seconds':>8} {'peak MB':>8} {'err/lat/warn/unch':>18} "
    f"{'exit':>5}  status"
)


def print_row(row: dict) -> None:
    if not row["compiled"]:
        print(
            f"{row['kernel']:<30} {row['arch']:<7} {'-':>6} {'-':>8} {'-':>8} {'-':>18} {'-':>5}  "
            f"did not compile: {row['reason'][:150]}",
            flush=True,
        )
        return
    if row["timed_out"]:
        counts, status = "-", f"killed after {row['seconds']:.0f} s"
    elif "errors" not in row:
        counts, status = "-", f"lint failed: {row.get('failure', '')[:120]}"
    else:
        counts = f"{row['errors']}/{row['latent']}/{row['warnings']}/{row['unchecked']}"
        status = STATUS.get(row["exit"], f"exit {row['exit']}")
        if row.get("notes"):
            status += f" ({row['notes']} notes)"
        if row.get("unfinished"):
            status += f" (time limit: {len(row['unfinished'])} kernel(s) unfinished)"
    exit_text = "-" if row["exit"] is None else str(row["exit"])
    print(
        f"{row['kernel']:<30} {row['arch']:<7} {row['lines']:>6} {row['seconds']:>8.2f} {row['peak_mb']:>8.1f} "
        f"{counts:>18} {exit_text:>5}  {status}",
        flush=True,
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", help="a FlyDSL source checkout (the directory holding kernels/)")
    parser.add_argument(
        "--arch", action="append", default=None, help="target arch (repeatable; default gfx950 and gfx942)"
    )
    parser.add_argument("--kernel", action="append", default=None, help="only this builder (repeatable)")
    parser.add_argument(
        "--keep-asm", default=None, metavar="DIR", help="write each compiled kernel as DIR/<arch>/<name>.s"
    )
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the rows as JSON")
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="seconds before a lint child is killed (default 300)"
    )
    parser.add_argument("--time-limit", type=float, default=120.0, help="the lint's own --time-limit (default 120)")
    parser.add_argument("--compile-timeout", type=float, default=600.0, help="seconds for one compile (default 600)")
    parser.add_argument(
        "--device-libs",
        default=None,
        metavar="DIR",
        help="a directory with ocml.bc/ockl.bc (default: Triton's AMD backend copy, if installed)",
    )
    parser.add_argument("--list", action="store_true", help="list the builders and their configurations, and exit")
    args = parser.parse_args(argv)
    if args.list:
        for name, (_, archs, config) in BUILDERS.items():
            print(f"{name:<30} {','.join(archs):<15} {config}")
        return 0
    if not (Path(args.path) / "kernels").is_dir():
        parser.error(f"{args.path} holds no kernels/ directory")
    args.arch = args.arch or ["gfx950", "gfx942"]
    print(f"# python -m benchmarks.lint_flydsl {' '.join(argv if argv is not None else sys.argv[1:])}")
    print(
        f"# lint: each kernel in its own child process, --time-limit {args.time_limit:g}, "
        f"killed after {args.timeout:g} s;"
        " seconds = the child's wall time (interpreter start included), peak MB = its maximum RSS"
    )
    print(HEADER, flush=True)
    rows = run(args)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    linted = [r for r in rows if r["compiled"]]
    print(f"# {len(linted)} kernel(s) linted, {len(rows) - len(linted)} did not compile")
    return 0


if __name__ == "__main__":
    sys.exit(main())
