"""Compile a FlyDSL kernel for a named AMD arch without a GPU, in a subprocess, and collect its ISA.

FlyDSL compiles without a device when ``COMPILE_ONLY=1`` and the target is named by both
``ARCH`` (the compile target) and ``FLYDSL_GPU_ARCH`` (what its helpers ask for the arch;
without it they guess gfx942 when no device answers). Its ROCDL backend links the code object
with ``ld.lld``, which it looks for as ``$ROCM_PATH/llvm/bin/ld.lld`` next to an
``amdgcn/bitcode`` directory: without a ROCm install that root is assembled here from a
distribution ``ld.lld``. ``FLYDSL_DEBUG_DUMP_ASM=1`` with ``FLYDSL_DUMP_DIR`` writes the final
ISA as ``<dir>/<kernel>/NN_final_isa.s``.

The compile runs in a child process because FlyDSL (LLVM underneath) can abort the whole
process on some errors. A kernel spec is ``path/to/file.py:function`` or ``module:function``;
the function takes keyword parameters and returns ``(launcher, args)``: a ``@flyc.jit``
launcher and the arguments to trace it with (host tensors do).
"""

from __future__ import annotations

import argparse
import glob
import importlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

MIN_LLD_MAJOR = 18  # code object v6, which FlyDSL emits (abi=600), needs lld 18 or newer
LINKER_ENV = "GEMMCHECK_LD_LLD"  # an explicit ld.lld to use


class CompileError(RuntimeError):
    pass


@dataclass
class AssemblyFile:
    kernel: str
    path: str
    text: str


@dataclass
class CompileResult:
    ok: bool
    assembly: list[AssemblyFile] = field(default_factory=list)
    error: str = ""
    returncode: int | None = None
    output: str = ""  # the child's stdout and stderr
    env: dict[str, str] = field(default_factory=dict)  # what was set for the child


def flydsl_installed() -> bool:
    """Whether FlyDSL is installed: its distribution, and a module that imports as ``flydsl``.
    ``find_spec`` alone is fooled by any folder named flydsl on sys.path (this repository's
    tests/compiled/flydsl, say), which it takes for a namespace package with no origin."""
    try:
        importlib.metadata.distribution("flydsl")
    except importlib.metadata.PackageNotFoundError:
        return False
    spec = importlib.util.find_spec("flydsl")
    return spec is not None and spec.origin is not None


def _lld_major(path: str) -> int | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, env=_linker_env(path))
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"LLD (\d+)", out.stdout + out.stderr)
    return int(m.group(1)) if m else None


def _linker_env(path: str) -> dict[str, str]:
    env = dict(os.environ)
    lib = Path(path).resolve().parent.parent / "lib"
    if lib.is_dir():
        # distribution lld binaries load libLLVM from their LLVM prefix
        env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (str(lib), env.get("LD_LIBRARY_PATH", "")) if p)
    return env


def find_linker() -> str | None:
    """An ``ld.lld`` new enough for FlyDSL's code objects, or None."""
    candidates: list[str] = []
    if os.environ.get(LINKER_ENV):
        candidates.append(os.environ[LINKER_ENV])
    rocm = os.environ.get("ROCM_PATH")
    if rocm:
        candidates.append(os.path.join(rocm, "llvm", "bin", "ld.lld"))
    candidates.append("/opt/rocm/llvm/bin/ld.lld")
    versioned = sorted(
        glob.glob("/usr/lib/llvm-*/bin/ld.lld"),
        key=lambda p: int(re.search(r"llvm-(\d+)", p).group(1)),  # type: ignore[union-attr]
        reverse=True,
    )
    candidates.extend(versioned)
    on_path = shutil.which("ld.lld")
    if on_path:
        candidates.append(on_path)
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            major = _lld_major(path)
            if major is not None and major >= MIN_LLD_MAJOR:
                return path
    return None


def toolkit_root(linker: str, cache_dir: str | os.PathLike) -> Path:
    """A directory laid out as ROCDL expects: ``llvm/bin/ld.lld`` and ``amdgcn/bitcode``.

    A real ROCm install named by ``ROCM_PATH`` is used as it is. Otherwise the bitcode directory
    is left empty: ROCDL links device bitcode (ocml/ockl) only into kernels that call it, so
    such kernels need a ROCm install.
    """
    rocm = os.environ.get("ROCM_PATH")
    if rocm and (Path(rocm) / "llvm" / "bin" / "ld.lld").exists() and (Path(rocm) / "amdgcn" / "bitcode").is_dir():
        return Path(rocm)
    root = Path(cache_dir) / "rocm-toolkit"
    bin_dir = root / "llvm" / "bin"
    bitcode = root / "amdgcn" / "bitcode"
    bin_dir.mkdir(parents=True, exist_ok=True)
    bitcode.mkdir(parents=True, exist_ok=True)
    target = bin_dir / "ld.lld"
    if target.is_symlink() or target.exists():
        if os.path.realpath(target) != os.path.realpath(linker):
            target.unlink()
    if not target.exists():
        try:
            target.symlink_to(linker)  # keeps the name ld.lld, which selects lld's ELF driver
        except FileExistsError:  # another process laid it out meanwhile
            pass
    return root


def cache_directory() -> Path:
    """Where the assembled toolkit root lives between runs (``GEMMCHECK_CACHE_DIR`` overrides)."""
    explicit = os.environ.get("GEMMCHECK_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gemmcheck"


def compile_environment(arch: str, dump_dir: str, toolkit: Path, linker: str) -> dict[str, str]:
    """The variables the child process compiles under."""
    env = {
        "COMPILE_ONLY": "1",
        "ARCH": arch,
        "FLYDSL_GPU_ARCH": arch,
        "FLYDSL_DEBUG_DUMP_ASM": "1",
        "FLYDSL_DUMP_DIR": dump_dir,
        "FLYDSL_RUNTIME_ENABLE_CACHE": "0",
        "ROCM_PATH": str(toolkit),
    }
    library_path = _linker_env(linker).get("LD_LIBRARY_PATH")
    if library_path:
        env["LD_LIBRARY_PATH"] = library_path
    return env


def collect_assembly(dump_dir: str) -> list[AssemblyFile]:
    files = []
    for path in sorted(glob.glob(os.path.join(dump_dir, "**", "*final_isa.s"), recursive=True)):
        kernel = os.path.basename(os.path.dirname(path))
        files.append(AssemblyFile(kernel=kernel, path=path, text=Path(path).read_text(encoding="utf-8")))
    return files


def compile_spec(
    spec: str,
    params: dict[str, object] | None = None,
    *,
    arch: str = "gfx950",
    keep_dir: str | None = None,
    timeout: float = 600,
    python: str = sys.executable,
) -> CompileResult:
    """Compile the kernel(s) a spec's launcher builds, in a child process, and return the ISA."""
    if not flydsl_installed():
        return CompileResult(False, error="FlyDSL is not installed (pip install flydsl)")
    linker = find_linker()
    if linker is None:
        return CompileResult(
            False, error=f"no ld.lld {MIN_LLD_MAJOR}+ found (apt-get install lld-19, or set {LINKER_ENV})"
        )
    work = Path(keep_dir) if keep_dir else Path(tempfile.mkdtemp(prefix="gemmcheck-flydsl-"))
    work.mkdir(parents=True, exist_ok=True)
    dump_dir = str(work / "dump")
    shutil.rmtree(dump_dir, ignore_errors=True)
    toolkit = toolkit_root(linker, cache_directory())
    env_vars = compile_environment(arch, dump_dir, toolkit, linker)
    command = [python, "-m", "pytest_gemmcheck.compiled.flydsl.compile", spec]
    for key, value in (params or {}).items():
        command += ["--param", f"{key}={value}"]
    try:
        done = subprocess.run(command, env={**os.environ, **env_vars}, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        return CompileResult(
            False, error=f"compile timed out after {timeout:.0f}s", env=env_vars, output=str(exc.output or "")
        )
    output = done.stdout + done.stderr
    assembly = collect_assembly(dump_dir)
    if done.returncode != 0:
        return CompileResult(False, assembly, _failure(output, done.returncode), done.returncode, output, env_vars)
    if not assembly:
        return CompileResult(False, [], "the compile wrote no assembly", 0, output, env_vars)
    if not keep_dir:
        # the texts are in memory; the dump directory is not needed any more
        shutil.rmtree(work, ignore_errors=True)
        assembly = [AssemblyFile(a.kernel, f"{spec}::{a.kernel}", a.text) for a in assembly]
    return CompileResult(True, assembly, "", 0, output, env_vars)


def _failure(output: str, returncode: int) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if "Error" in line or "error" in line:
            return f"compile failed (exit {returncode}): {line.strip()}"
    return f"compile failed (exit {returncode})" + (f": {lines[-1].strip()}" if lines else "")


def _parse_value(text: str) -> object:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text in ("True", "true", "False", "false"):
        return text.lower() == "true"
    return text


def load_spec(spec: str):
    """The function a spec names: ``file.py:function`` or ``module:function``."""
    source, _, function = spec.rpartition(":")
    if not source or not function:
        raise ValueError(f"a kernel spec is FILE.py:FUNCTION or MODULE:FUNCTION, got {spec!r}")
    if source.endswith(".py") or os.path.sep in source:
        path = os.path.abspath(source)
        if not os.path.isfile(path):
            raise ValueError(f"no such file: {source}")
        module_spec = importlib.util.spec_from_file_location(Path(path).stem, path)
        module = importlib.util.module_from_spec(module_spec)  # type: ignore[arg-type]
        sys.modules[module_spec.name] = module  # type: ignore[union-attr]
        module_spec.loader.exec_module(module)  # type: ignore[union-attr]
    else:
        module = importlib.import_module(source)
    if not hasattr(module, function):
        raise ValueError(f"{source} has no function {function!r}")
    return getattr(module, function)


def _child_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_gemmcheck.compiled.flydsl.compile")
    parser.add_argument("spec")
    parser.add_argument("--param", action="append", default=[])
    args = parser.parse_args(argv)
    params = {}
    for item in args.param:
        key, _, value = item.partition("=")
        params[key] = _parse_value(value)
    if os.environ.get("COMPILE_ONLY") != "1":
        print("refusing to run: COMPILE_ONLY=1 is not set", file=sys.stderr)
        return 2
    launcher, launch_args = load_spec(args.spec)(**params)
    launcher(*launch_args)  # traces and compiles; COMPILE_ONLY=1 stops before any launch
    print(json.dumps({"compiled": args.spec, "params": params}))
    return 0


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1:]))
