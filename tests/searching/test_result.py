"""A search's answer as text: the gemmcheck.case line to paste, the boundary, the summary."""

from pytest_gemmcheck.records.result import CaseResult, LaunchRecord
from pytest_gemmcheck.searching.result import Probe, SearchResult


def probe(config, *, failing):
    result = CaseResult(key="k", kernel="fused", m=config["m"], n=config["n"], k=config["k"], quant=config["quant"],
                        tile=None, out_dtype="float32", params=config["params"], fp8="e4m3fn", seed=0, device="cpu",
                        deterministic=True, rtol=0.05, floor=1.0,
                        launches=[LaunchRecord(1, kinds=["wrong"] if failing else [])],
                        verdict="regression" if failing else "pass", message="the evidence\n  of it" if failing else "")
    return Probe(config=config, result=result, failing=failing, seconds=0.1, phase="search")


SMALLEST = {"m": 4096, "n": 7168, "k": 256, "quant": "ptpc", "params": {"fuse": False, "name": "a"}}


def found(**overrides):
    values = dict(kernel="fused_gemm_scatter", space={}, case={"tile": "256x256", "out_dtype": "float32",
                                                               "fp8": "e4m3fn", "rtol": 0.1},
                  probes=[probe(SMALLEST, failing=True), probe({**SMALLEST, "k": 512}, failing=False)],
                  minimal=SMALLEST, seconds=12.0, stopped="shrunk from the first failing probe, #1",
                  boundary={"k": {"fails": 256, "passes": 512, "below": None, "above": 512, "fails_up_to": 384},
                            "m": {"fails": 4096, "passes": None, "below": None, "above": None, "fails_up_to": 8192},
                            "params": {"fuse": {"fails": False, "passes": True}}})
    values.update(overrides)
    return SearchResult(**values)


def test_the_line_to_paste_names_what_differs_from_the_case_defaults():
    assert str(found()) == ('gemmcheck.case("fused_gemm_scatter", m=4096, n=7168, k=256, quant="ptpc", '
                            'params={"fuse": False, "name": "a"}, tile="256x256", out_dtype=torch.float32, rtol=0.1)')


def test_the_summary_gives_the_line_the_boundary_and_the_evidence():
    lines = found().summary().splitlines()
    assert lines[0] == ("gemmcheck.search fused_gemm_scatter: 2 probes (1 failing, 2 launches) in 12.0 s; "
                        "shrunk from the first failing probe, #1")
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
