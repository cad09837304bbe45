"""The dataflow engine's own rules: folded loops, unchecked reads, local labels, latent
findings, gfx942, and the command line's exit statuses, kernel filter and workgroup size (the
register model's semantics are test_semantics.py's; the command itself,
tests/commands/test_lint.py)."""

import pytest

from pytest_gemmcheck.commands.lint import main
from pytest_gemmcheck.compiled.lint import exit_status, lint_text

ARGUMENT = "\ts_load_dword s16, s[0:1], 0x10\n\ts_waitcnt lgkmcnt(0)\n"  # s16: a kernel argument, unknown
BARE_RACE = "{load_a}\ts_barrier\n{read_next_a}"


def test_unmodelled_instruction_makes_the_read_unchecked_and_the_result_incomplete(asm_kernel, snippets):
    body = snippets["load_a"] + (
        "\ts_barrier\n\ts_quadmask_b32 s20, 0\n\tv_add_u32_e32 v6, s20, v5\n\tds_read_b128 v[8:11], v6\n"
    )
    report = lint_text(asm_kernel(body))
    [unchecked] = report.findings
    assert unchecked.severity == "unchecked" and unchecked.instruction == "ds_read_b128 v[8:11], v6"
    assert "instructions the model does not know" in unchecked.why
    assert [line.split(": ", 1)[1] for line in report.incomplete] == ["s_quadmask_b32 s20, 0"]


def test_numeric_local_labels_resolve(asm_kernel, snippets):
    # inline asm: "s_cbranch_scc0 1f ... 1:"; the code after the label is checked, not cut off
    body = ARGUMENT + "\ts_cmp_eq_u32 s16, 0\n\ts_cbranch_scc0 1f\n\ts_nop 0\n1:\n" + BARE_RACE.format(**snippets)
    report = lint_text(asm_kernel(body))
    [error] = report.findings
    assert error.severity == "error" and error.instruction == "ds_read_b128 v[8:11], v5"


RING = (
    ARGUMENT
    + """\ts_mov_b32 s12, 0
.LBB0_1:
\ts_and_b32 s20, s12, 1
\ts_lshl_b32 s20, s20, 12
\ts_add_u32 s21, s20, s8
\ts_mov_b32 m0, s21
\tbuffer_load_dwordx4 v4, s[4:7], s12 offen lds
\ts_waitcnt vmcnt(0)
\ts_barrier
\tv_add_u32_e32 v6, s20, v5
\tds_read_b128 v[8:11], v6
\ts_waitcnt lgkmcnt(0)
\ts_barrier
\ts_add_u32 s12, s12, 1
\ts_cmp_lg_u32 s12, s16
\ts_cbranch_scc1 .LBB0_1
"""
)


def test_runtime_loop_is_analysed_for_any_trip_count(asm_kernel):
    report = lint_text(asm_kernel(RING))
    assert report.findings == []
    racy = lint_text(asm_kernel(RING.replace("\ts_waitcnt vmcnt(0)\n", "")))
    [error] = racy.errors
    assert error.instruction == "ds_read_b128 v[8:11], v6" and error.lds == [(0, 8192)]  # both stages
    assert racy.unchecked == []


LATENT = """{load_a}\ts_barrier
\ts_cmp_lt_u32 s10, 2
\ts_cbranch_scc1 .LBB0_9
\ts_barrier
.LBB0_9:
\ts_waitcnt vmcnt(0)
\ts_barrier
{read_next_a}"""


def test_latent_when_only_a_phase_offset_leaves_the_read_unordered(asm_kernel, snippets):
    # waves 2-3 pass one more barrier between their load and their wait: wave 1's barrier pairs
    # with that one, so wave 2's load is not yet retired, though wave 2 retires it before the next
    [latent] = lint_text(asm_kernel(LATENT.format(**snippets))).findings
    assert latent.severity == "latent" and latent.kind == "read-across-phase-offset"
    assert latent.reader_waves == [1] and [load.waves for load in latent.loads] == [[2]]
    aligned = LATENT.replace("\ts_cmp_lt_u32 s10, 2\n\ts_cbranch_scc1 .LBB0_9\n\ts_barrier\n.LBB0_9:\n", "")
    assert lint_text(asm_kernel(aligned.format(**snippets))).findings == []


GFX942_DMA = "\ts_mov_b32 m0, s8\n\tbuffer_load_dword v4, s[4:7], 0 offen lds sc0 sc1\n"


def test_gfx942_dword_dma_and_its_syntax(asm_kernel, snippets):
    racy = lint_text(asm_kernel(GFX942_DMA + "\ts_barrier\n" + snippets["read_next_a"], arch="gfx942"))
    [error] = racy.errors
    assert error.lds == [(0, 256), (1024, 1280), (2048, 2304), (3072, 3328)]  # 64 lanes x 4 bytes per wave
    fixed = GFX942_DMA + "\ts_waitcnt vmcnt(0)\n\ts_barrier\n" + snippets["read_next_a"]
    assert lint_text(asm_kernel(fixed, arch="gfx942")).findings == []


def test_gfx942_limits(asm_kernel, snippets):
    # gfx942 has no 16-byte LDS DMA (gfx950 added it) and a 6-bit vmcnt
    report = lint_text(asm_kernel(BARE_RACE.format(**snippets), arch="gfx942"))
    assert [f.severity for f in report.findings] == ["unchecked"]
    assert "gfx942 cannot" in report.findings[0].why
    wide = lint_text(asm_kernel(GFX942_DMA + "\ts_waitcnt vmcnt(64)\n", arch="gfx942"))
    assert [f.severity for f in wide.findings] == ["unchecked"] and "at most 63" in wide.findings[0].why
    assert lint_text(asm_kernel(BARE_RACE.format(**snippets))).errors  # the same code is fine for gfx950


@pytest.fixture
def write(tmp_path):
    def write(name, text):
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write


def test_exit_statuses(write, asm_kernel, snippets, capsys):
    unchecked = write(
        "unchecked.s",
        asm_kernel(
            snippets["load_a"] + "\ts_barrier\n\ts_quadmask_b32 s20, 0\n"
            "\tv_add_u32_e32 v6, s20, v5\n\tds_read_b128 v[8:11], v6\n"
        ),
    )
    assert main([unchecked]) == 3
    assert capsys.readouterr().out.strip().endswith("0 error(s), 0 warning(s), 1 unchecked in 1 kernel(s)")
    latent = write("latent.s", asm_kernel(LATENT.format(**snippets)))
    assert main([latent]) == 0
    assert main(["--fail-on-latent", latent]) == 1
    assert capsys.readouterr().out.strip().endswith("0 error(s), 0 warning(s), 1 latent in 1 kernel(s)")
    # an error outweighs what was not checked
    assert main([unchecked, write("racy.s", asm_kernel(BARE_RACE.format(**snippets)))]) == 1


def test_kernel_filter_and_workgroup_override(tmp_path, asm_kernel, snippets, capsys):
    text = asm_kernel(snippets["load_a"] + "\ts_barrier\n" + snippets["read_next_a"])
    text = text.replace("    .reqd_workgroup_size:\n      - 256\n      - 1\n      - 1\n", "")
    path = tmp_path / "k.s"
    path.write_text(text)
    # a filter that matches nothing checks nothing: never a pass
    assert main(["--kernel", "other", str(path)]) == 3
    assert "no kernel named other (here: " in capsys.readouterr().out
    # one wave only: no other wave's slice is written, nothing to race with
    assert main(["--workgroup-size", "64", str(path)]) == 0
    assert main(["--workgroup-size", "128", str(path)]) == 1


def test_time_limit_names_the_unfinished_kernel(write, lint_corpus, capsys):
    path = write("hti.s", lint_corpus.bf16_gemm(hti=True, loop_wait=0))  # no error to find before the limit
    assert main(["--time-limit", "0.05", path]) == 3
    out = capsys.readouterr().out
    assert "unchecked: unfinished" in out and "bf16_gemm_hti" in out and "time limit (0.05 s)" in out
    assert main(["--time-limit", "0", path]) == 2


def test_path_engine_on_request(write, example_asm, capsys):
    path = write("racy.s", example_asm["fp8_tail_gemm_racy_k512"])
    assert main(["--engine", "paths", path]) == 1
    assert capsys.readouterr().out.strip().endswith("16 error(s), 0 warning(s) in 1 kernel(s)")


def test_a_read_of_unknown_address_after_vmcnt0_and_a_barrier_is_safe(asm_kernel, snippets):
    # no load of any wave can be in flight at the read: its address is not needed
    body = (
        snippets["load_a"] + "\ts_waitcnt vmcnt(0)\n\ts_barrier\n\ts_quadmask_b32 s20, 0\n"
        "\tv_add_u32_e32 v6, s20, v5\n\tds_read_b128 v[8:11], v6\n"
    )
    report = lint_text(asm_kernel(body))
    assert report.findings == []


def test_the_paths_engine_never_passes_an_unresolved_read(asm_kernel, snippets):
    from pytest_gemmcheck.compiled.lint.analysis import Options

    body = snippets["load_a"] + (
        "\ts_barrier\n\ts_quadmask_b32 s20, 0\n\tv_add_u32_e32 v6, s20, v5\n\tds_read_b128 v[8:11], v6\n"
    )
    report = lint_text(asm_kernel(body), options=Options(engine="paths"))
    assert [f.severity for f in report.findings] == ["unchecked"]
    assert exit_status([report]) == 3


def _guarded_gather(pages: int, load: str, drain: str) -> str:
    """``pages`` exec-mask diamonds, each loading a page into LDS in the lanes that have one and
    zero-filling it in the others (MLA decode's gather), then a barrier and a read of the next
    wave's slice."""
    body = "\tbuffer_load_dword v20, v0, s[4:7], 0 offen\n\ts_waitcnt vmcnt(0)\n\tv_cmp_ne_u32_e32 vcc, -1, v20\n"
    for page in range(pages):
        body += (
            "\ts_and_saveexec_b64 s[2:3], vcc\n\ts_xor_b64 s[2:3], exec, s[2:3]\n"
            f"\ts_cbranch_execz .LBB0_{2 * page}\n"
            + load
            + f".LBB0_{2 * page}:\n\ts_andn2_saveexec_b64 s[2:3], s[2:3]\n"
            f"\ts_cbranch_execz .LBB0_{2 * page + 1}\n\ts_waitcnt vmcnt(0)\n\tds_write_b32 v4, v21 offset:8192\n"
            f".LBB0_{2 * page + 1}:\n\ts_or_b64 exec, exec, s[2:3]\n"
        )
    return body + drain + "\ts_barrier\n\tds_read_b128 v[8:11], v5\n"


def test_a_guarded_gather_is_joined_at_its_branches_and_its_race_still_found(asm_kernel, snippets):
    # 12 diamonds: 4**12 paths, and as many queue shapes (which loads are left after the last
    # vmcnt(0)); past 192 states at a branch they are joined, queues included
    from pytest_gemmcheck.compiled.lint.analysis import Options

    racy = lint_text(asm_kernel(_guarded_gather(12, snippets["load_a"], "")), options=Options(time_limit=60))
    assert racy.unfinished == [] and [f.severity for f in racy.findings] == ["error"]
    assert racy.findings[0].instruction == "ds_read_b128 v[8:11], v5"
    fixed = lint_text(
        asm_kernel(_guarded_gather(12, snippets["load_a"], "\ts_waitcnt vmcnt(0)\n")), options=Options(time_limit=60)
    )
    assert fixed.unfinished == [] and fixed.findings == []


def test_a_kernel_without_dma_loads_or_ds_writes_has_nothing_to_pair(asm_kernel):
    # an unknown address and an unmodelled instruction do not matter where nothing can race
    unknown = "\ts_quadmask_b32 s20, 0\n\tv_add_u32_e32 v6, s20, v5\n"
    assert lint_text(asm_kernel(unknown + "\ts_barrier\n\tds_read_b128 v[8:11], v6\n")).findings == []
    # a DS write retired before the barrier: no other wave's write can pair with the read, whatever
    # the addresses; left in flight at the barrier, the pair is not decided: a note, not a pass
    written = unknown + "\tds_write_b128 v6, v[8:11]\n"
    read = "\ts_barrier\n\tds_read_b128 v[8:11], v6\n"
    assert lint_text(asm_kernel(written + "\ts_waitcnt lgkmcnt(0)\n" + read)).findings == []
    report = lint_text(asm_kernel(written + read))
    [note] = report.findings
    assert (note.severity, note.kind) == ("note", "ds-write-undecided") and "DS write" in note.why
    assert exit_status([report]) == 0
    wide = lint_text(asm_kernel("\ts_waitcnt vmcnt(64)\n\ts_barrier\n", arch="gfx942"))
    assert [f.severity for f in wide.findings] == ["unchecked"] and "at most 63" in wide.findings[0].why


def test_a_uniform_branch_after_a_guarded_gather_is_taken_alike_by_every_wave(asm_kernel, snippets):
    # the gather leaves exec as it found it: a branch on a kernel argument after it is uniform.
    # Were it taken per wave, a wave reading after its wait and barrier would pair with another
    # wave's load still in flight at the same barrier on the other side
    uniform_tail = (
        "\ts_cmp_eq_u32 s16, 0\n\ts_cselect_b64 s[2:3], -1, 0\n\ts_and_b64 vcc, exec, s[2:3]\n"
        "\ts_cbranch_vccz .LBB1_0\n" + snippets["load_b"] + "\ts_barrier\n\ts_waitcnt vmcnt(0)\n"
        "\ts_branch .LBB1_1\n.LBB1_0:\n"
        + snippets["load_b"]
        + "\ts_waitcnt vmcnt(0)\n\ts_barrier\n"
        + snippets["read_next_b"]
        + ".LBB1_1:\n"
    )
    body = ARGUMENT + _guarded_gather(2, snippets["load_a"], "\ts_waitcnt vmcnt(0)\n") + uniform_tail
    report = lint_text(asm_kernel(body))
    assert report.unfinished == [] and report.findings == []


def test_the_paths_engine_stops_at_the_time_limit_unchecked(asm_kernel, snippets):
    from pytest_gemmcheck.compiled.lint.analysis import Options

    report = lint_text(
        asm_kernel(snippets["load_a"] + "\ts_waitcnt vmcnt(0)\n\ts_barrier\n" + snippets["read_next_a"]),
        options=Options(engine="paths", time_limit=0),
    )
    assert report.unfinished == ["k"]
    assert [f.kind for f in report.findings] == ["unfinished"] and exit_status([report]) == 3


def test_selects_that_no_lds_address_depends_on_are_joined_not_decided(asm_kernel, snippets):
    # twenty uniform selects on an unknown SCC (an unsigned division's corrections) whose values
    # feed only a global offset: deciding each both ways would run the phase 2**20 times. Only a
    # select an LDS address is computed from, right after it, is decided
    corrections = "".join(
        f"\ts_cmp_lt_u32 s16, {k}\n\ts_cselect_b32 s17, 1, 2\n\ts_add_u32 s18, s18, s17\n" for k in range(20)
    )
    body = (
        ARGUMENT
        + "\ts_mov_b32 s18, 0\n"
        + corrections
        + "\tbuffer_load_dword v9, v4, s[4:7], s18 offen\n"
        + snippets["load_a"]
        + "\ts_waitcnt vmcnt(0)\n\ts_barrier\n"
        + snippets["read_next_a"]
    )
    report = lint_text(asm_kernel(body))
    assert report.findings == [] and report.unfinished == []
    racy = lint_text(asm_kernel(body.replace("\ts_waitcnt vmcnt(0)\n\ts_barrier\n", "\ts_barrier\n")))
    assert [f.severity for f in racy.findings] == ["error"]
    assert not any(step.startswith("select line") for step in racy.findings[0].trace)


def test_a_select_inside_an_innermost_loop_is_joined(lint_corpus):
    # the pipelined loop's reads moved by a select on the tile against a kernel argument: a choice
    # per iteration would keep the loop from folding. Joined, the two offsets make the address
    # unknown, and with the next tile in flight the reads are unchecked, never a pass
    moved = (
        "\ts_cmp_lt_u32 s12, s17\n\ts_cselect_b32 s26, 0, 0x40\n\tv_add_u32_e32 v6, s26, v6\n"
        "\tds_read_b128 v[8:11], v6\n"
    )
    text = lint_corpus.pipelined_loop().replace("\tds_read_b128 v[8:11], v6\n", moved)
    report = lint_text(text)
    assert report.unfinished == [] and report.errors == []
    assert {f.kind for f in report.unchecked} == {"unresolved-address"}
    assert all(not step.startswith("select line") for f in report.findings for step in f.trace)


def test_the_same_report_whatever_the_hash_seed(write, example_asm):
    # sets of the analysis iterate in an order that depends on the process's string hashes: the
    # finding that stands for a group of pairs (the waves its text names) must not
    import os
    import subprocess
    import sys

    path = write("ring.s", example_asm["ring_loop_racy"])
    outputs = {
        subprocess.run(
            [sys.executable, "-m", "pytest_gemmcheck.compiled.lint", "--format", "json", path],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            timeout=600,
        ).stdout
        for seed in ("1", "2", "3", "4")
    }
    assert len(outputs) == 1 and '"findings"' in next(iter(outputs))
