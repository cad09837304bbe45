"""The lint on the corpus of examples/flydsl/lint_corpus: each kernel's findings, and every
mutant with one wait removed. Its time is benchmarks/lint_scaling.py's to measure: here the
limit is generous, so that a loaded machine never turns a finding into "unfinished"."""

import pytest

from pytest_gemmcheck.compiled.lint import Options, exit_status, lint_text

CLEAN = (
    "attention_causal_window",
    "bf16_gemm",
    "fp4_prologue",
    "runtime_tail",
    "selected_tail",
    "pipelined_loop",
    "scratch_address",
    "epilogue",
)
UNHURRIED = Options(time_limit=900.0)


def linted(text):
    report = lint_text(text, options=UNHURRIED)
    assert not report.unfinished, report.unfinished
    return report


@pytest.mark.parametrize("name", CLEAN)
def test_clean_kernels_have_no_finding_and_are_all_checked(name, lint_corpus):
    report = linted(lint_corpus.corpus()[name])
    assert report.findings == [] and report.incomplete == []
    assert exit_status([report]) == 0


def test_attention_stage_reads_resolve_for_any_trip_count(lint_corpus):
    # the rotated loop runs a runtime number of tiles, its stage is k & 1: every read is checked
    report = linted(lint_corpus.attention())
    assert report.unchecked == [] and report.unfinished == []


def test_fp4_prologue_seed_names_the_wait_that_would_cover_it(lint_corpus):
    report = linted(lint_corpus.fp4_prologue(racy=True))
    [error] = report.findings
    assert error.severity == "error" and error.instruction == "ds_read_b128 v[16:19], v6"
    assert [load.instruction for load in error.loads] == ["buffer_load_dwordx4 v4, s[4:7], s24 offen lds"]
    assert "s_waitcnt vmcnt(2)" in error.cover  # the racy prologue waits vmcnt(3)
    assert "rendezvous, not a completion wait" in error.why and error.trace
    assert exit_status([report]) == 1


def test_hti_phase_offset_is_latent_only_after_a_whole_phase(lint_corpus):
    # waves 4-7 run a barrier phase behind. The prologue's second tile (line 27) is still in flight
    # at two of their barriers before waves 0-3 read it: a whole barrier phase lies between its
    # issue and the read, which only that elapsed time orders (latent). The loop's refill (line 58)
    # is issued just before the barrier that pairs with the read's: the offset adds no time (error)
    report = linted(lint_corpus.bf16_gemm(hti=True))
    assert report.latent and report.errors
    for finding in report.latent:
        assert [load.line for load in finding.loads] == [27]
        assert "phase apart" in finding.barriers and "only that elapsed time orders the read" in finding.why
        assert finding.cover.startswith("s_waitcnt vmcnt(")
    for finding in report.errors:
        assert [load.line for load in finding.loads] == [58] and set(finding.reader_waves) <= {0, 1, 2, 3}
        assert "phase apart" in finding.barriers and "the offset adds no elapsed time" in finding.why
    # the two groups leave the runtime loop a phase apart, and still every read is checked
    assert report.unchecked == []
    assert exit_status([report]) == 1


def test_runtime_tail_is_safe_by_counters_and_its_racy_twin_is_not_a_pass(lint_corpus):
    # the tail's stage is a kernel argument: its address stays unknown. After vmcnt(0) and a
    # barrier no load of any wave can pair with it, so it needs none; after a bare barrier both
    # stages' loads may be in flight: the read is unchecked (exit 3), naming one of them
    fixed = linted(lint_corpus.runtime_tail())
    assert fixed.findings == [] and exit_status([fixed]) == 0
    racy = linted(lint_corpus.runtime_tail(racy=True))
    [unchecked] = racy.findings
    assert (unchecked.severity, unchecked.kind, unchecked.instruction) == (
        "unchecked",
        "unresolved-address",
        "ds_read_b128 v[8:11], v6",
    )
    assert "the LDS address is not known here" in unchecked.why and "may still be in flight" in unchecked.why
    assert unchecked.reader_waves == [0, 1, 2, 3]
    assert exit_status([racy]) == 3


def test_a_stage_base_selected_on_a_uniform_parity_is_decided_both_ways(lint_corpus):
    # the select between the two stage bases runs once per choice of its SCC, for every wave
    # alike: the waves that select stage 1 read it while it is in flight (an error, where a join
    # of the two bases would leave the address unknown and the read unchecked), stage 0 is clean
    racy = linted(lint_corpus.selected_tail(racy=True))
    [error] = racy.findings
    assert (error.severity, error.instruction) == ("error", "ds_read_b128 v[8:11], v6")
    assert error.lds == [(0x1000, 0x2000)] and [load.line for load in error.loads] == [26]
    assert "select line 30 SCC 0" in error.trace
    assert exit_status([racy]) == 1


def test_pipelined_loop_with_one_wait_per_iteration(lint_corpus):
    fixed = linted(lint_corpus.pipelined_loop())
    assert fixed.findings == [] and exit_status([fixed]) == 0
    racy = linted(lint_corpus.pipelined_loop(racy=True))
    assert [(f.severity, f.instruction) for f in racy.findings] == [
        ("error", "ds_read_b128 v[8:11], v6"),
        ("error", "ds_read_b128 v[12:15], v7"),
    ]
    assert all("s_waitcnt vmcnt(" in f.cover and "rendezvous, not a completion wait" in f.why for f in racy.errors)
    assert racy.unchecked == [] and exit_status([racy]) == 1


def test_scratch_reloaded_address_is_safe_after_vmcnt0_and_a_barrier(lint_corpus):
    report = linted(lint_corpus.scratch_address())
    assert report.findings == [] and report.incomplete == [] and exit_status([report]) == 0


def test_hti_with_the_loop_fully_drained_has_no_latent_read(lint_corpus):
    report = linted(lint_corpus.bf16_gemm(hti=True, loop_wait=0))
    assert report.errors == [] and report.latent == []


def test_epilogue_reads_racing_the_writes_they_mean_to_see_are_errors(lint_corpus):
    # no DMA load in the kernel: the fixed point runs for its DS writes; the reads' addresses are
    # computed under an exec of two and-ed bounds checks and resolve
    report = linted(lint_corpus.epilogue(drop="publish"))
    [error] = report.findings
    assert (error.severity, error.kind, error.instruction) == (
        "error",
        "ds-write-races-read",
        "ds_read_b128 v[12:15], v7",
    )
    assert [write.instruction for write in error.loads] == ["ds_write_b128 v6, v[8:11]"]
    assert error.reader_waves == [0, 1, 2, 3] and error.lds == [(0x4000, 0x5000)]
    assert "after issuing its own copy of that write" in error.why
    assert exit_status([report]) == 1
    # the wait left out instead: the writes are in flight when their waves pass the barrier
    report = linted(lint_corpus.mutants(lint_corpus.epilogue())["publish"])
    [error] = report.findings
    assert (error.severity, error.kind) == ("error", "ds-write-races-read")
    assert "s_waitcnt lgkmcnt(0) in wave" in error.cover and "rendezvous, not a completion wait" in error.why


def test_epilogue_writes_that_may_overtake_another_waves_read_are_warnings(lint_corpus):
    # the second half overwrites the slots with no barrier after the first half's reads: a
    # write-after-read ordered only by time, weighed as a refill that may overtake a read
    report = linted(lint_corpus.epilogue(drop="reuse"))
    [warning] = report.findings
    assert (warning.severity, warning.kind, warning.instruction) == (
        "warning",
        "ds-write-overtakes-read",
        "ds_read_b128 v[12:15], v7",
    )
    assert [write.instruction for write in warning.loads] == ["ds_write_b128 v6, v[16:19]"]
    assert "may overtake the read" in warning.why
    assert exit_status([report]) == 0


# mutant -> what removing that wait does; every effective one must add an error or a warning
MUTANTS = {
    ("attention_causal_window", "next-tile"): "error",
    ("attention_causal_window", "last-tile"): "error",
    ("attention_causal_window", "reads-done"): "warning",
    ("bf16_gemm", "loop"): "error",
    ("bf16_gemm", "tail"): "error",
    ("fp4_prologue", "seed"): "error",
    ("fp4_prologue", "loop"): "error",
    ("fp4_prologue", "reads-done"): "warning",
    # the loop's first wait retires tile 0 before any read, and the tail's every load: no effect
    ("bf16_gemm", "prologue"): None,
    # an address the lint cannot compute with a load in flight: not checked, never a pass
    ("runtime_tail", "tail"): "unchecked",
    ("selected_tail", "tail"): "error",
    ("pipelined_loop", "loop"): "error",
    ("pipelined_loop", "reads-done"): "warning",
    ("scratch_address", "reload"): "unchecked",
    # the C tile's writes left in flight at the barrier that publishes them
    ("epilogue", "publish"): "error",
}


def test_every_tagged_wait_has_a_mutant_expectation(lint_corpus):
    tagged = {(name, tag) for name in CLEAN for tag in lint_corpus.mutants(lint_corpus.corpus()[name])}
    assert tagged == set(MUTANTS)


@pytest.mark.parametrize("name, tag", sorted(MUTANTS))
def test_mutant_with_one_wait_removed(name, tag, lint_corpus):
    report = linted(lint_corpus.mutants(lint_corpus.corpus()[name])[tag])
    expected = MUTANTS[(name, tag)]
    if expected is None:
        assert report.findings == []
    else:
        assert report.of(expected), [f.severity for f in report.findings]
        if expected == "error":
            assert exit_status([report]) == 1
        if expected == "unchecked":
            assert exit_status([report]) == 3


def test_compiled_runtime_ring_loop(example_asm):
    # FlyDSL's own output for examples/flydsl/lint_corpus/ring_loop.py: unrolled by four with a
    # remainder loop over a runtime trip count; the fixed kernel is clean and every read checked
    fixed = linted(example_asm["ring_loop_fixed"])
    assert fixed.findings == [] and fixed.incomplete == []
    racy = linted(example_asm["ring_loop_racy"])
    assert len(racy.errors) == 9  # the eight unrolled reads and the remainder's
    assert all("s_waitcnt vmcnt(" in f.cover for f in racy.errors)
    assert racy.unchecked == []
