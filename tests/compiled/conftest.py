import importlib.util
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "flydsl" / "lint_corpus" / "kernels.py"


def _load_corpus():
    spec = importlib.util.spec_from_file_location("lint_corpus_kernels", CORPUS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


corpus = _load_corpus()

# Every wave computes its id (v1, s10), its lane's 16-byte slot (v4) and, in M0, the start of
# its own 1 KiB slice of buffer A (buffer B is 4 KiB further on).
PROLOGUE = """\tv_lshrrev_b32_e32 v1, 6, v0
\tv_readfirstlane_b32 s10, v1
\tv_lshlrev_b32_e32 v2, 10, v1
\tv_readfirstlane_b32 s8, v2
\ts_add_u32 s9, s8, 0x1000
\tv_and_b32_e32 v3, 63, v0
\tv_lshlrev_b32_e32 v4, 4, v3
\tv_add_u32_e32 v5, 1, v1
\tv_and_b32_e32 v5, 3, v5
\tv_lshlrev_b32_e32 v5, 10, v5
\tv_add_u32_e32 v5, v5, v4
"""
# v5 = the same lane slot in the next wave's slice of buffer A: reading it needs that wave's load.

LOAD_A = "\ts_mov_b32 m0, s8\n\tbuffer_load_dwordx4 v4, s[4:7], 0 offen lds\n"
LOAD_B = "\ts_mov_b32 m0, s9\n\tbuffer_load_dwordx4 v4, s[4:7], 0 offen lds\n"
READ_NEXT_A = "\tds_read_b128 v[8:11], v5\n"
READ_NEXT_B = "\tds_read_b128 v[12:15], v5 offset:4096\n"


def kernel(body: str, *, name: str = "k", threads: int = 256, prologue: bool = True, arch: str = "gfx950") -> str:
    return corpus.assembly(name, (PROLOGUE if prologue else "") + body, threads, arch)


@pytest.fixture
def lint_corpus():
    """examples/flydsl/lint_corpus/kernels.py: the corpus builders and their mutants."""
    return corpus


@pytest.fixture
def asm_kernel():
    """Build a gfx950 kernel's assembly text around a body (with the common prologue)."""
    return kernel


@pytest.fixture
def snippets():
    return {"load_a": LOAD_A, "load_b": LOAD_B, "read_next_a": READ_NEXT_A, "read_next_b": READ_NEXT_B}


@pytest.fixture
def example_asm():
    """The committed gfx950 assembly of examples/flydsl/fp8_tail_gemm.py: {name: text}."""
    return {path.stem: path.read_text() for path in DATA.glob("*.s")}
