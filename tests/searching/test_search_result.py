"""A search's answer as text: the gemmcheck.case line to paste, the boundary, the summary."""

from pytest_gemmcheck.records.result import CaseResult, LaunchRecord
from pytest_gemmcheck.searching.search_result import Probe, SearchResult


def probe(config, *, failing):
    result = CaseResult(
        key="k",
        kernel="fused",
        m=config["m"],
        n=config["n"],
        k=config["k"],
        quant=config["quant"],
        tile=None,
        out_dtype="float32",
        params=config["params"],
        fp8="e4m3fn",
        seed=0,
        device="cpu",
        deterministic=True,
        rtol=0.05,
        floor=1.0,
        launches=[LaunchRecord(1, kinds=["wrong"] if failing else [])],
        verdict="regression" if failing else "pass",
        message="the evidence\n  of it" if failing else "",
    )
    return Probe(config=config, result=result, failing=failing, seconds=0.1, phase="search")


def side(launches, *, established, p=0.0079, needs=4):
    return {"bad": 0, "launches": launches, "p": p, "alpha": 0.05 / 6, "established": established, "needs": needs}


SMALLEST = {"m": 4096, "n": 7168, "k": 256, "quant": "ptpc", "params": {"fuse": False, "name": "a"}}


def found(**overrides):
    values = dict(
        kernel="fused_gemm_scatter",
        space={},
        case={"tile": "256x256", "out_dtype": "float32", "fp8": "e4m3fn", "rtol": 0.1},
        probes=[probe(SMALLEST, failing=True), probe({**SMALLEST, "k": 512}, failing=False)],
        minimal=SMALLEST,
        seconds=12.0,
        stopped="shrunk from the first failing probe, #1",
        boundary={
            "k": {
                "fails": 256,
                "passes": 512,
                "below": None,
                "above": 512,
                "fails_up_to": 384,
                "evidence": {"fails": [5, 5], "below": None, "above": side(4, established=True)},
            },
            "m": {
                "fails": 4096,
                "passes": None,
                "below": None,
                "above": None,
                "fails_up_to": 8192,
                "evidence": {"fails": [5, 5], "below": None, "above": None},
            },
            "params": {
                "fuse": {
                    "fails": False,
                    "passes": True,
                    "other": True,
                    "evidence": {"fails": [5, 5], "other": side(4, established=True)},
                }
            },
        },
    )
    values.update(overrides)
    return SearchResult(**values)


def test_the_line_to_paste_names_what_differs_from_the_case_defaults():
    assert str(found()) == (
        'gemmcheck.case("fused_gemm_scatter", m=4096, n=7168, k=256, quant="ptpc", '
        'params={"fuse": False, "name": "a"}, tile="256x256", out_dtype=torch.float32, rtol=0.1)'
    )


def test_the_summary_gives_the_line_the_boundary_and_the_evidence():
    lines = found().summary().splitlines()
    assert lines[0] == (
        "gemmcheck.search fused_gemm_scatter: 2 probes (1 failing configuration, 2 launches) "
        "in 12.0 s; shrunk from the first failing probe, #1"
    )
    assert lines[2].strip().startswith('gemmcheck.case("fused_gemm_scatter", m=4096')
    assert "  m: fails at every value tried from 4096 up to 8192 (n, k, quant and params as above)" in lines
    assert "  k: k=256 up to k=384 fails; k=512 passes (m, n, quant and params as above)" in lines
    assert '  params["fuse"]: False fails; True passes (the rest as above)' in lines
    assert lines[-3:] == ["  its evidence:", "    the evidence", "      of it"]


def test_nothing_failing_says_so():
    nothing = found(minimal=None, boundary={}, probes=[probe({**SMALLEST, "k": 512}, failing=False)])
    assert str(nothing) == "# gemmcheck.search fused_gemm_scatter: no failing configuration in 1 probe"
    assert nothing.summary().endswith("\n  no failing configuration found")
    assert nothing.failing == [] and nothing.minimal_probe is None


def test_a_passing_neighbour_that_does_not_tell_it_from_luck_is_no_boundary():
    flaky = {
        "fails": 256,
        "passes": None,
        "below": 128,
        "above": 384,
        "fails_up_to": 256,
        "evidence": {
            "fails": [2, 7],
            "below": side(4, established=False, p=0.33, needs=65),
            "above": side(4, established=False, p=0.33, needs=None),
        },
    }
    lines = found(boundary={"k": flaky}).summary().splitlines()
    assert not any(line.startswith("  k: k=256 fails") for line in lines)  # no region
    assert (
        "  k: k=128 passed 0/4 launches, too few to tell it from k=256 with 2/7 bad (one-sided Fisher p = 0.33, "
        "alpha 0.0083): not a boundary; 0/65 launches at k=128 would make it one"
    ) in lines
    assert any(
        line.startswith("  k: k=384 passed 0/4")
        and line.endswith("no count of launches can make it one (the failing configuration has no bad launch)")
        for line in lines
    )
    one_side = dict(flaky, passes=384, evidence=dict(flaky["evidence"], above=side(12, established=True)))
    lines = found(boundary={"k": one_side}).summary().splitlines()
    assert "  k: k=256 fails; k=384 passes (m, n, quant and params as above)" in lines
    assert any(line.startswith("  k: k=128 passed 0/4 launches, too few") for line in lines)


def test_skipped_configurations_are_listed_in_the_summary():
    skipped = [{"config": {**SMALLEST, "k": k}, "reason": "needs K >= 1024"} for k in (128, 384, 512, 640)]
    lines = found(skipped=skipped).summary().splitlines()
    assert "  4 configurations skipped by make_launch, left out of the search:" in lines
    assert '    m=4096, n=7168, k=128, quant="ptpc", params={"fuse": False, "name": "a"}: needs K >= 1024' in lines
    assert "    ... and 1 more" in lines
