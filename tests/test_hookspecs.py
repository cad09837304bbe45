"""The extension points, each used from a downstream repo's conftest.py as a kernel repo would:
stack fields, a quant mode of its own, a per-case reference, and a hook given each result
before it is recorded."""

import json
import sqlite3
import textwrap

import pytest

CONFTEST = textwrap.dedent('''
    import json
    import os

    import torch

    from pytest_gemmcheck import Inputs, QuantMode


    class Int8PerRow(QuantMode):
        """int8 operands with an fp32 scale per row of A and of B: a mode the core does not have."""
        name = "int8_rows"
        uses_fp8 = False

        def make_inputs(self, m, n, k, *, seed, device, fp8):
            g = torch.Generator().manual_seed(seed)
            a = torch.randint(-127, 128, (m, k), generator=g, dtype=torch.int8).to(device)
            b = torch.randint(-127, 128, (n, k), generator=g, dtype=torch.int8).to(device)
            a_scale = (torch.rand(m, generator=g) + 0.5).to(device)
            b_scale = (torch.rand(n, generator=g) + 0.5).to(device)
            return Inputs(self.name, a, b, a_scale, b_scale, seed=seed)

        def dequantize_a(self, inputs, rows):
            return inputs.a[rows].float() * inputs.a_scale[rows, None]

        def dequantize_b(self, inputs):
            return inputs.b.float() * inputs.b_scale[:, None]


    def pytest_gemmcheck_quant_modes():
        return [Int8PerRow()]


    def pytest_gemmcheck_stack_info(info):
        info["ccl"] = "rccl 2.21"


    def pytest_gemmcheck_result(result):
        with open(os.environ["RESULTS_LOG"], "a") as log:
            log.write(json.dumps({"kernel": result.kernel, "verdict": result.verdict,
                                  "bad": len(result.bad_launches)}) + "\\n")
''')

TESTS = textwrap.dedent("""
    import torch


    def int8_gemm(x, out):
        acc = x.a.float() @ x.b.float().t()
        out.copy_(acc * x.a_scale[:, None] * x.b_scale[None, :])


    def test_int8(gemmcheck):
        case = gemmcheck.case("int8_gemm", m=32, n=48, k=64, quant="int8_rows", device="cpu")
        x = case.inputs()
        case.run(lambda out: int8_gemm(x, out), repeat=3)


    def gelu_reference(x):
        return torch.nn.functional.gelu(x.a.float() @ x.b.float().t())


    def test_epilogue(gemmcheck):
        case = gemmcheck.case("gemm_gelu", m=32, n=32, k=64, device="cpu", reference=gelu_reference)
        x = case.inputs()
        case.run(lambda out: out.copy_(torch.nn.functional.gelu(x.a.float() @ x.b.float().t())), repeat=3)


    def test_epilogue_without_its_reference(gemmcheck):
        case = gemmcheck.case("gemm_gelu", m=32, n=32, k=64, device="cpu")
        x = case.inputs()
        case.run(lambda out: out.copy_(torch.nn.functional.gelu(x.a.float() @ x.b.float().t())), repeat=3)
""")


@pytest.fixture
def downstream(pytester, monkeypatch, tmp_path):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_downstream_kernels=TESTS)
    log = tmp_path / "results.jsonl"
    monkeypatch.setenv("RESULTS_LOG", str(log))
    return pytester, log


def test_every_extension_point_from_a_downstream_conftest(downstream, tmp_path):
    pytester, log = downstream
    db = tmp_path / "history.db"
    result = pytester.runpytest(f"--gemmcheck-db={db}", "-p", "no:cacheprovider")
    # the mode of its own and the case's own reference pass; the epilogue without it is wrong
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "PASS * int8_gemm int8_rows 32x48x64: 0/3 launches bad",
            "PASS * gemm_gelu bf16 32x32x64: 0/3 launches bad",
            "REGRESSION gemm_gelu bf16 32x32x64: 3/3 launches bad*",
            "    launches 1, 2, 3; rate < *[[]wrong*",
        ]
    )
    # the result hook: each result, judged, in order
    assert [json.loads(line) for line in log.read_text().splitlines()] == [
        {"kernel": "int8_gemm", "verdict": "pass", "bad": 0},
        {"kernel": "gemm_gelu", "verdict": "pass", "bad": 0},
        {"kernel": "gemm_gelu", "verdict": "regression", "bad": 3},
    ]
    with sqlite3.connect(db) as connection:
        extra = connection.execute("SELECT extra FROM stack").fetchone()[0]
        keys = connection.execute('SELECT count(DISTINCT key) FROM "case" WHERE kernel = ?', ("gemm_gelu",)).fetchone()[
            0
        ]
    assert json.loads(extra)["ccl"] == "rccl 2.21"  # the stack field, stored with the run's stack
    assert keys == 2  # a case with its own reference is a case of its own


def test_the_result_hook_runs_once_per_result_under_processes(downstream):
    pytester, log = downstream
    result = pytester.runpytest_subprocess(
        "-k",
        "int8",
        "--gemmcheck-processes=2",
        "--gemmcheck-repeat=4",
        "--gemmcheck-no-record",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=1)
    # the aggregate, in the parent: not each child's part
    assert [json.loads(line) for line in log.read_text().splitlines()] == [
        {"kernel": "int8_gemm", "verdict": "pass", "bad": 0}
    ]


def test_a_reference_of_the_wrong_shape_is_a_case_error(pytester):
    pytester.makepyfile(
        test_bad=textwrap.dedent("""
        import torch

        def test_bad(gemmcheck):
            case = gemmcheck.case("k", m=16, n=16, k=32, device="cpu", reference=lambda x: torch.zeros(16, 8))
            case.run(lambda out: None, repeat=2)
    """)
    )
    result = pytester.runpytest("--gemmcheck-no-record", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*CaseError: reference *<lambda> of <gemmcheck case k bf16 16x16x32 *> must return a "
            "floating-point [[]16, 16[]] tensor, got shape [[]16, 8[]], dtype float32*"
        ]
    )
