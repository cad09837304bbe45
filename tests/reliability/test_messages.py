"""Reports that must not mislead: where the launches ran, a kernel that raised, and what its
traceback shows."""

import json
import shutil
import textwrap

import pytest

from pytest_gemmcheck.judging.baseline import Baseline, Evidence
from pytest_gemmcheck.judging.message import failure_message
from pytest_gemmcheck.judging.verdict import REGRESSION, judge
from pytest_gemmcheck.records.result import CaseResult, LaunchRecord
from pytest_gemmcheck.reporting.terminal import summary_lines


def result_of(bad_kinds, *, launches=12, device="cpu"):
    """A result whose first launches have the failure kinds ``bad_kinds`` (one list a launch)."""
    records = []
    for index in range(launches):
        kinds = bad_kinds[index] if index < len(bad_kinds) else []
        record = LaunchRecord(
            index=index + 1,
            pid=1,
            host="h",
            device=device,
            kinds=list(kinds),
            device_uuid="GPU-1" if device != "cpu" else "",
            wrong=9 if "wrong" in kinds else 0,
        )
        if "raised" in kinds:
            record.error = "RuntimeError: illegal memory access"
        records.append(record)
    return CaseResult(
        key="k1",
        kernel="fused",
        m=16,
        n=16,
        k=32,
        quant="bf16",
        tile=None,
        out_dtype="bfloat16",
        params={},
        fp8=None,
        seed=0,
        device=device,
        deterministic=True,
        rtol=0.05,
        floor=1.0,
        launches=records,
        stack={"gpu_arch": None if device == "cpu" else "sm_90"},
    )


def golden_of(result):
    return Baseline(source="golden", description="golden goldens/fused.json [arch:cpu]", evidence=Evidence.of(result))


# --- where it ran --------------------------------------------------------------------------------


def test_cpu_evidence_says_the_cpu_and_gpu_evidence_its_gpus():
    assert Evidence.of(result_of([])).describe() == "0/12 (rate < 22.1%) launches in 1 process on the CPU"
    assert (
        Evidence.of(result_of([], device="cuda:0")).describe() == "0/12 (rate < 22.1%) launches in 1 process on 1 GPU"
    )
    lines = judge(result_of([["wrong"]]), golden_of(result_of([["wrong"]]))).lines
    assert "current: 1/12 (rate < 33.9%) launches in 1 process on the CPU" in lines
    assert any(
        line.startswith("baseline: 1/12 (rate < 33.9%) launches in 1 process on the CPU, from golden") for line in lines
    )


def test_a_cpu_golden_says_the_cpu(tmp_path):
    from pytest_gemmcheck.judging.goldens import GoldenStore

    store = GoldenStore(tmp_path)
    store.accept(result_of([["wrong"]]), "arch", "accepted")
    store.write("fused")
    assert GoldenStore(tmp_path).lookup(result_of([])).evidence.describe().endswith("on the CPU")


@pytest.mark.parametrize("processes", [1, 2])
def test_the_advice_to_spread_over_processes_is_given_only_where_the_session_asked_for_one(processes):
    """Under --gemmcheck-processes=2 with --gemmcheck-stop-on-bad, the first process's bad launch
    started no second: the evidence rests on one process, but advising --gemmcheck-processes=N
    to a session that gave it is wrong; it says why there was one instead."""
    from pytest_gemmcheck.config.table import Settings
    from pytest_gemmcheck.judging.baseline import CLEAN
    from pytest_gemmcheck.judging.conclude import conclude

    result = result_of([["wrong"]], launches=1)
    conclusion = conclude(result, Settings(processes=processes, stop_on_bad=True), lambda _: CLEAN)
    assert conclusion.verdict.kind == REGRESSION
    advice = "races decided per process (at load or JIT time) need several: --gemmcheck-processes=N"
    if processes == 1:
        assert advice in result.message
    else:
        assert "--gemmcheck-processes=N" not in result.message
        assert (
            "note: the current evidence rests on a single process of the 2 asked for (--gemmcheck-processes): "
            "the others ran no launch" in result.message
        )


# --- a kernel that raised --------------------------------------------------------------------------

RAISED_ON_3 = [[], [], ["raised"]]


@pytest.mark.parametrize("baseline_source", ["golden", "history"])
def test_a_raised_launch_is_a_regression_even_where_the_baseline_raised_too(baseline_source):
    baseline = Baseline(
        source=baseline_source, description="earlier", evidence=Evidence.of(result_of(RAISED_ON_3, launches=3))
    )
    result = result_of(RAISED_ON_3, launches=3)
    verdict = judge(result, baseline)
    assert verdict.kind == REGRESSION
    assert verdict.reasons[0] == "launch 3 raised RuntimeError: illegal memory access"
    result.verdict = verdict.kind
    message = failure_message(result, verdict)
    assert message.startswith("gemmcheck: fused bf16 16x16x32: regression\n  launch 3 raised RuntimeError")
    assert "known-bad" not in message and "known bad" not in message
    lines = summary_lines(result)
    assert lines[0] == "REGRESSION fused bf16 16x16x32: 1/3 launches bad"
    assert lines[1].startswith("    launch 3; rate < ")
    assert "    launch 3 raised RuntimeError: illegal memory access" in lines


def test_a_hung_launch_is_a_regression_even_where_the_baseline_hung_too():
    hung = result_of([[], ["hung"]], launches=2)
    hung.launches[1].error = "did not finish within 0.5 s on the host"
    verdict = judge(hung, golden_of(hung))
    assert verdict.kind == REGRESSION and verdict.reasons == ["launch 2 hung: did not finish within 0.5 s on the host"]


def test_several_raised_launches_name_the_first():
    verdict = judge(result_of([["raised"], [], ["raised"], ["raised"]]))
    assert verdict.reasons[0] == "3 launches raised; the first, launch 1, raised RuntimeError: illegal memory access"


RAISING_SUITE = textwrap.dedent("""
    from kernels import bf16_matmul

    def kernel(x, out, launch):
        if launch == 3:
            raise RuntimeError("illegal memory access")
        bf16_matmul(x, out)

    def test_raises(gemmcheck):
        case = gemmcheck.case("raiser", m=16, n=16, k=32)
        x = case.inputs()
        launches = iter(range(1, 100))
        case.run(lambda out: kernel(x, out, next(launches)))
""")


@pytest.fixture
def raising(pytester, examples_dir):
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makepyfile(test_raises=RAISING_SUITE)
    return pytester


def test_a_raising_kernel_with_a_golden_that_raised_fails_as_raised_not_known_bad(raising):
    accepting = raising.runpytest("--gemmcheck-accept", "--gemmcheck-no-record", "-p", "no:cacheprovider")
    accepting.assert_outcomes(failed=1)
    accepting.stdout.fnmatch_lines(["gemmcheck: not accepted as a golden: raiser bf16 16x16x32: a launch raised"])
    assert not (raising.path / "goldens").exists()  # a crash is no baseline to accept
    # a golden that accepts a raised launch all the same (written by hand, or by an older version)
    from pytest_gemmcheck.case.identity import case_key

    key = case_key(
        {
            "kernel": "raiser",
            "m": 16,
            "n": 16,
            "k": 32,
            "quant": "bf16",
            "tile": None,
            "out_dtype": "bfloat16",
            "params": {},
            "fp8": None,
        }
    )
    (raising.path / "goldens").mkdir()
    (raising.path / "goldens" / "raiser.json").write_text(
        json.dumps(
            {
                "format": 1,
                "kernel": "raiser",
                "cases": [
                    {
                        "key": key,
                        "scope": "any",
                        "launches": 3,
                        "bad_launches": 1,
                        "kinds": ["raised"],
                        "worst_wrong": 0,
                    }
                ],
            }
        )
    )
    result = raising.runpytest("--gemmcheck-no-record", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "known-bad" not in output.lower() and "known bad" not in output
    result.stdout.fnmatch_lines(
        [
            "*gemmcheck: raiser bf16 16x16x32: regression",
            "*  launch 3 raised RuntimeError: illegal memory access",
            "REGRESSION raiser bf16 16x16x32: 1/3 launches bad",
            "    vs 1/3 (golden): golden*",
            "    launch 3; rate < *[[]raised[]]",
            "    launch 3 raised RuntimeError: illegal memory access",
        ]
    )


@pytest.mark.parametrize("flags", [[], ["-l"], ["--tb=long"]])
def test_a_raising_kernels_traceback_shows_where_it_raised_without_dumping_the_output(raising, flags):
    result = raising.runpytest("--gemmcheck-no-record", "-p", "no:cacheprovider", *flags)
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "nan, nan" not in output  # the poisoned output, under any flag
    if "-l" not in flags:  # with -l the test's own locals show, its inputs among them
        assert "tensor(" not in output
    result.stdout.fnmatch_lines(
        [
            "*LaunchError: launch 3 of 12 raised RuntimeError: illegal memory access",
            "*File *test_raises.py*, line 12, in <lambda>",
            "*File *test_raises.py*, line 5, in kernel",
            '*raise RuntimeError("illegal memory access")',
        ]
    )
    assert "loop.py" not in output  # the plugin's own frames are not the kernel's


def test_the_launch_error_still_chains_the_kernels_exception(make_case):
    from pytest_gemmcheck.errors import LaunchError

    case = make_case("k", m=16, n=16, k=32, repeat=2)

    def launch(out):
        raise ValueError("bad grid")

    with pytest.raises(LaunchError) as raised:
        case.run(launch)
    assert isinstance(raised.value.__cause__, ValueError) and str(raised.value.__cause__) == "bad grid"
