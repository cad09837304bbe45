"""Mutation testing of the lint on the committed compiled corpus (tests/compiled/data).

Every wait and barrier of the race-free kernels is weakened in turn by
gemmcheck_dev/mutants.py; each mutant that may leave an LDS-DMA load in flight where it
stood (a vmcnt part deleted or raised by one), or that deletes a barrier after LDS-DMA loads and
before LDS reads, must be an error. The counter analysis that sorts the mutants is checked on
its own (no lint runs for it), then the lint runs on the in-scope mutants only.
"""

import collections
import functools

import pytest

from gemmcheck_dev.mutants import format_result, mutants, program, run_mutants, summary, waitcnt_fields

FIXED = ("fp8_tail_gemm_fixed_k512", "ring_loop_fixed")

# (family, effect) -> how many mutants of that kind the analysis finds in each race-free file
CLASSIFICATION = {
    "fp8_tail_gemm_fixed_k512": {
        ("vmcnt", "in scope"): 8,
        ("vmcnt", "out of scope"): 136,
        ("barrier", "in scope"): 4,
        ("lgkmcnt", "in scope"): 6,
        ("lgkmcnt", "out of scope"): 4,
    },
    # the compiler's lgkmcnt(0) before each store makes the kernel's own one equivalent, and
    # deleting the compiler's leaves the reads to the kernel's: out of scope either way
    "ring_loop_fixed": {
        ("vmcnt", "in scope"): 11,
        ("vmcnt", "out of scope"): 7,
        ("barrier", "in scope"): 9,
        ("lgkmcnt", "equivalent"): 18,
        ("lgkmcnt", "out of scope"): 22,
    },
}

# Mutants the lint is known not to catch, as (file, line, kind): reason. None today.
KNOWN_MISSES: dict[tuple[str, int, str], str] = {}


@functools.lru_cache(maxsize=None)
def _mutants_of(text):
    return mutants(text)[0]


def family(kind):
    return "barrier" if "barrier" in kind else ("vmcnt" if "vmcnt" in kind else "lgkmcnt")


def test_waitcnt_fields_symbolic_and_raw():
    assert waitcnt_fields("s_waitcnt vmcnt(3) lgkmcnt(0)") == {"vmcnt": 3, "lgkmcnt": 0}
    assert waitcnt_fields("s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)") == {"vmcnt": 0, "expcnt": 0, "lgkmcnt": 0}
    # raw gfx9 immediates: 0xc07f is lgkmcnt(0) alone (vmcnt and expcnt at their maxima), 0 waits for all
    assert waitcnt_fields("s_waitcnt 0xc07f") == {"lgkmcnt": 0}
    assert waitcnt_fields("s_waitcnt 0") == {"vmcnt": 0, "expcnt": 0, "lgkmcnt": 0}
    assert waitcnt_fields("s_barrier") is None


def test_counter_analysis_on_a_small_kernel():
    text = "\n".join(
        [
            "\t.type k,@function",
            "k:",
            "\tbuffer_load_dword v1, s[0:3], 0 offen lds",  # line 3: DMA, vm position 1 after the next
            "\tbuffer_load_dword v2, s[0:3], 0 offen",  # line 4: a plain load
            "\ts_waitcnt vmcnt(1)",  # line 5: retires the DMA load
            "\ts_barrier",
            "\tds_read_b32 v3, v0",
            "\ts_waitcnt vmcnt(0)",  # line 8: retires only the plain load
            "\ts_waitcnt lgkmcnt(0)",  # line 9: retires the read before the barrier
            "\ts_barrier",
            "\ts_waitcnt lgkmcnt(0)",  # line 11: nothing left: equivalent
            "\ts_waitcnt vmcnt(0) lgkmcnt(0)",  # line 12: the same
            "\tds_read_b32 v4, v0",
            "\ts_waitcnt lgkmcnt(0)",  # line 14: a later one retires the read: out of scope
            "\ts_waitcnt lgkmcnt(0)",
            "\ts_endpgm",
        ]
    )
    found, prog = mutants(text)
    assert not prog.indirect and len(prog.entries) == 1
    by = {(m.line, m.kind): m.effect for m in found}
    assert by[(5, "delete vmcnt")] == "in scope" and by[(5, "vmcnt+1")] == "in scope"
    assert by[(8, "delete vmcnt")] == "out of scope"
    assert by[(9, "delete lgkmcnt")] == "in scope"  # the read would still be in flight at the barrier
    assert by[(11, "delete lgkmcnt")] == "equivalent"
    assert by[(12, "delete vmcnt")] == "equivalent" and by[(12, "delete lgkmcnt")] == "equivalent"
    assert by[(14, "delete lgkmcnt")] == "out of scope" and by[(15, "delete lgkmcnt")] == "equivalent"
    assert by[(6, "delete s_barrier")] == "in scope"
    assert by[(10, "delete s_barrier")] == "in scope"  # the read at line 13 follows it


def test_a_loop_back_edge_carries_loads_into_the_wait():
    text = "\n".join(
        [
            "\t.type k,@function",
            "k:",
            "\ts_waitcnt vmcnt(0)",  # line 3: at entry nothing is outstanding
            ".LBB0_1:",
            "\ts_waitcnt vmcnt(0)",  # line 5: the back edge brings the DMA load
            "\tbuffer_load_dword v1, s[0:3], 0 offen lds",
            "\ts_cbranch_scc1 .LBB0_1",
            "\ts_endpgm",
        ]
    )
    found, prog = mutants(text)
    by = {(m.line, m.kind): m.effect for m in found}
    assert by[(3, "delete vmcnt")] == "equivalent"
    assert by[(5, "delete vmcnt")] == "in scope"
    assert prog.successors[3] == [4, 1]


@pytest.mark.parametrize("name", FIXED)
def test_classification_of_the_race_free_corpus(name, example_asm):
    found = _mutants_of(example_asm[name])
    counts = collections.Counter((family(m.kind), m.effect) for m in found)
    assert dict(counts) == CLASSIFICATION[name]


def _in_scope_ordering(m):
    return m.effect == "in scope" and family(m.kind) in ("vmcnt", "barrier")


@pytest.mark.parametrize("name", FIXED)
def test_every_in_scope_mutant_of_the_race_free_corpus_is_an_error(name, example_asm):
    result = run_mutants(example_asm[name], name, select=_in_scope_ordering, found=_mutants_of(example_asm[name]))
    assert result["baseline_exit"] == 0
    misses = {(name, m.line, m.kind): m for m in result["mutants"] if m.outcome != "caught"}
    assert set(misses) == {key for key in KNOWN_MISSES if key[0] == name}, [
        (m.line, m.original, m.kind, m.outcome) for m in misses.values()
    ]
    assert summary(result)["false_errors"] == 0
    for m in result["mutants"]:
        if m.outcome == "caught":
            assert m.exit_status == 1


def test_program_follows_labels_and_ends(example_asm):
    prog = program(example_asm["ring_loop_fixed"])
    assert len(prog.entries) == 1 and not prog.indirect
    ends = [k for k, s in prog.successors.items() if not s]
    assert ends and all(prog.lines[prog.code[k]].strip() == "s_endpgm" for k in ends)


def test_numeric_local_labels_are_followed():
    # inline assembly's `s_cbranch_scc0 1f` around a wave-dependent extra barrier (FlyDSL's HTI)
    text = "\n".join(
        [
            "\t.type k,@function",
            "k:",
            "\tbuffer_load_dword v1, s[0:3], 0 offen lds",
            "\ts_cmp_eq_u32 s2, 0",
            "\ts_cbranch_scc0 1f",
            "\ts_barrier",
            "1:",
            "\ts_waitcnt vmcnt(0)",
            "\ts_barrier",
            "\tds_read_b32 v3, v0",
            "\ts_endpgm",
        ]
    )
    found, prog = mutants(text)
    assert not prog.indirect
    assert prog.successors[2] == [3, 4]  # the fall-through barrier and the label
    by = {(m.line, m.kind): m.effect for m in found}
    assert by[(8, "delete vmcnt")] == "in scope"
    assert (6, "delete s_barrier") not in by  # the next barrier comes before any read


def test_the_path_engine_judges_the_misses_of_a_racy_kernel(example_asm):
    # the racy tail's own race hides what some mutants add: the oracle lints each of those with
    # the path engine too (the original by it once), and says whether it finds a new error
    result = run_mutants(
        example_asm["fp8_tail_gemm_racy_k256"],
        time_limit=60,
        oracle=True,
        effects=("in scope",),
        kinds=("delete vmcnt", "vmcnt+1", "delete s_barrier"),
    )
    misses = [m for m in result["mutants"] if m.outcome != "caught"]
    assert misses and all(m.oracle.startswith("paths engine: ") for m in misses)
    assert all(m.oracle == "" for m in result["mutants"] if m.outcome == "caught")


def test_the_score_with_fail_on_latent_counts_latent_mutants(lint_corpus):
    # the HTI kernel with its loop drained: deleting the prologue's wait leaves a tile in flight
    # across the extra barrier of the lagging group, read by the leading one a whole phase after
    # its issue (latent, not an error); --fail-on-latent would fail it, and the second score says so
    result = run_mutants(
        lint_corpus.bf16_gemm(hti=True, loop_wait=0),
        effects=("in scope",),
        kinds=("delete vmcnt", "vmcnt+1", "delete s_barrier"),
    )
    outcomes = {(m.line, m.kind): m.outcome for m in result["mutants"]}
    assert outcomes[(28, "delete vmcnt")] == "latent"
    totals = summary(result)
    assert totals["caught_or_latent"] == totals["caught"] + sum(o == "latent" for o in outcomes.values())
    assert totals["caught_or_latent"] == totals["in_scope"]
    assert "with --fail-on-latent (errors or latent findings)" in format_result(result)
