"""A rank that raises, hangs or dies fails its case naming the rank, the other ranks and the group
are torn down within the launch timeout, and the session goes on to its next test; world sizes
and shapes that cannot be are one-line errors naming the option or the argument."""

import textwrap

FAULTS = textwrap.dedent("""
    import os
    import time

    import pytest
    import torch.distributed as dist
    from collective_kernels import CORRECT


    def faulty(x, fault):
        launch = CORRECT["all_reduce"](x)
        launches = [0]

        def faulty_launch(out):
            launches[0] += 1
            if dist.get_rank() == 1 and launches[0] == 4:
                if fault == "raises":
                    raise ValueError("rank 1 planted this")
                if fault == "dies":
                    os._exit(3)
                time.sleep(600)  # never enters the collective
            launch(out)

        return faulty_launch


    @pytest.mark.gemmcheck(world_size=2, launch_timeout=3)
    @pytest.mark.parametrize("fault", ["raises", "hangs", "dies"])
    def test_fault(gemmcheck, fault):
        case = gemmcheck.case("gemm_all_reduce", m=64, n=64, k=128, collective="all_reduce")
        case.run(faulty(case.inputs(), fault))


    @pytest.mark.gemmcheck(world_size=2)
    def test_after_the_faults(gemmcheck):
        case = gemmcheck.case("gemm_all_reduce", m=64, n=64, k=128, collective="all_reduce")
        case.run(CORRECT["all_reduce"](case.inputs()))
""")


def test_a_rank_that_raises_hangs_or_dies_fails_its_case_and_the_session_goes_on(ranks):
    result, entries = ranks.run(FAULTS, "--gemmcheck-repeat=8")
    result.assert_outcomes(failed=3, passed=1)
    errors = {
        name: {
            (launch["index"], launch["rank"]): (launch["kinds"], launch["error"] or "")
            for launch in entry["launches"]
            if launch["kinds"]
        }
        for name, entry in entries.items()
    }

    raised = errors["test_fault[raises]"]
    assert raised[(4, 1)] == (["raised"], "ValueError: rank 1 planted this")
    assert raised[(4, 0)][0] in (["raised"], ["hung"])  # it waited in the all_reduce for rank 1

    hung = errors["test_fault[hangs]"]
    assert hung[(4, 1)][0] == ["hung"] and "did not finish within 3 s" in hung[(4, 1)][1]

    died = errors["test_fault[dies]"]
    assert died[(4, 1)] == (["raised"], "rank 1's process exited with status 3 and recorded none of its launches")
    assert died[(4, 0)][0] == ["raised"]  # its all_reduce lost the other rank

    for name in ("test_fault[raises]", "test_fault[hangs]", "test_fault[dies]"):
        assert set(errors[name]) <= {(4, 0), (4, 1)}, errors[name]  # launches 1-3 clean on both ranks
    assert entries["test_after_the_faults"]["verdict"] == "pass"


USAGE = textwrap.dedent("""
    import pytest
    from collective_kernels import CORRECT


    def test_no_ranks(gemmcheck):
        gemmcheck.case("gemm_all_reduce", m=64, n=64, k=128, collective="all_reduce")


    @pytest.mark.gemmcheck(world_size=2)
    def test_k_does_not_divide(gemmcheck):
        gemmcheck.case("gemm_all_reduce", m=64, n=64, k=101, collective="all_reduce")


    @pytest.mark.gemmcheck(world_size=2)
    def test_unknown_collective(gemmcheck):
        gemmcheck.case("gemm", m=64, n=64, k=128, collective="allreduce")
""")


def test_a_case_that_cannot_be_is_one_line(ranks):
    result, entries = ranks.run(USAGE)
    result.assert_outcomes(failed=3)
    assert entries == {}
    result.stdout.fnmatch_lines(
        [
            "*CaseError: collective='all_reduce' needs the ranks of a torch.distributed group: run the test with "
            "@pytest.mark.gemmcheck(world_size=W) or --gemmcheck-world-size=W, or as a rank of a launcher (torchrun)*",
            "*CaseError: collective='all_reduce' cuts K into 2 shards, one a rank, and K=101 is not a multiple of the "
            "world size 2",
            "*CaseError: collective='allreduce' is not a collective; choose one of all_reduce, reduce_scatter, "
            "all_gather",
        ]
    )


def test_a_world_size_that_cannot_be_is_a_usage_error(ranks):
    result, _ = ranks.run("def test_it(gemmcheck):\n    pass\n", "--gemmcheck-world-size=0")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--gemmcheck-world-size: expected a whole number of ranks from 1 to 256, got '0'"])
    marked = "import pytest\n\n@pytest.mark.gemmcheck(world_size=1000)\ndef test_it(gemmcheck):\n    pass\n"
    result, _ = ranks.run(marked)
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        [
            "*test_suite.py::test_it: @pytest.mark.gemmcheck(world_size=...): expected a whole "
            "number of ranks from 1 to 256, got 1000"
        ]
    )
