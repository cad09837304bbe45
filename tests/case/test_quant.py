"""Seeded inputs: the same bytes for the same seed on any machine; scales shaped and applied
as DESIGN.md's quant table says; shapes a mode cannot represent refused clearly."""

import pytest
import torch

from pytest_gemmcheck.case.quant import (
    BLOCK_K,
    QuantMode,
    e8m0_to_float,
    fp8_flavour,
    quant_mode,
    quant_mode_names,
    register_quant_mode,
)
from pytest_gemmcheck.case.reference import compute_reference
from pytest_gemmcheck.errors import CaseError

# sha256 of the bytes of (a, b, a_scale, b_scale) for 96x160x256, seed 1234. These pin the
# generator: a change here changes every stored case's inputs, so it must be deliberate.
DIGESTS = {
    ("bf16", "e4m3fn"): "d4293bbbceb030bc",
    ("fp8", "e4m3fn"): "e476111a43d06927",
    ("fp8", "e4m3fnuz"): "daee614bf2482e65",
    ("ptpc", "e4m3fn"): "372adbc70d815f9d",
    ("ptpc", "e4m3fnuz"): "f66287eebca0f990",
    ("blockscale", "e4m3fn"): "ba629037eec78425",
    ("blockscale", "e4m3fnuz"): "a5c076ce9b5f9a91",
    ("mxfp8", "e4m3fn"): "d092b3e81f2b6c41",
    ("mxfp8", "e4m3fnuz"): "33e4e0574e93c14b",
}


def make(quant, m=96, n=160, k=256, seed=1234, fp8="e4m3fn"):
    return quant_mode(quant).make_inputs(m, n, k, seed=seed, device=torch.device("cpu"), fp8=fp8_flavour(fp8))


@pytest.mark.parametrize("quant,fp8", DIGESTS)
def test_inputs_are_pinned_bytes(quant, fp8):
    assert make(quant, fp8=fp8).digest() == DIGESTS[(quant, fp8)]


@pytest.mark.parametrize("quant", ["bf16", "fp8", "ptpc", "blockscale", "mxfp8"])
def test_seed_changes_inputs_and_repeats_exactly(quant):
    assert make(quant, seed=1).digest() == make(quant, seed=1).digest()
    assert make(quant, seed=1).digest() != make(quant, seed=2).digest()


def test_operand_dtypes_and_scale_shapes():
    m, n, k = 96, 160, 256
    expected = {
        "bf16": (torch.bfloat16, None, None),
        "fp8": (torch.float8_e4m3fn, (), ()),
        "ptpc": (torch.float8_e4m3fn, (m,), (n,)),
        "blockscale": (torch.float8_e4m3fn, (m, k // 128), (n // 128 + 1, k // 128)),
        "mxfp8": (torch.float8_e4m3fn, (m, k // 32), (n, k // 32)),
    }
    for quant, (dtype, a_scale, b_scale) in expected.items():
        x = make(quant)
        assert x.a.dtype == dtype and x.b.dtype == dtype
        assert tuple(x.a.shape) == (m, k) and tuple(x.b.shape) == (n, k)
        assert (None if x.a_scale is None else tuple(x.a_scale.shape)) == a_scale, quant
        assert (None if x.b_scale is None else tuple(x.b_scale.shape)) == b_scale, quant
    assert make("mxfp8").a_scale.dtype == torch.float8_e8m0fnu


def test_fnuz_flavour_uses_its_own_range():
    x = make("ptpc", fp8="e4m3fnuz")
    assert x.a.dtype == torch.float8_e4m3fnuz
    assert x.a.float().abs().max() <= 240
    assert make("ptpc").a.float().abs().max() > 240  # e4m3fn goes to 448


def test_scales_use_the_fp8_range():
    for quant in ("fp8", "ptpc", "blockscale"):
        x = make(quant)
        assert torch.isfinite(x.a.float()).all() and torch.isfinite(x.b.float()).all()
        # scales come from block maxima: the largest element of each block reaches fp8's max
        assert x.a.float().abs().max() == 448


def test_blockscale_dequantizes_per_block():
    x = make("blockscale", m=5, n=200, k=300)  # partial blocks in N and K
    assert tuple(x.a_scale.shape) == (5, 3) and tuple(x.b_scale.shape) == (2, 3)
    mode = quant_mode("blockscale")
    a = mode.dequantize_a(x, slice(0, 5))
    assert torch.equal(a[2, 130], x.a[2, 130].float() * x.a_scale[2, 1])
    b = mode.dequantize_b(x)
    assert torch.equal(b[150, 299], x.b[150, 299].float() * x.b_scale[1, 2])
    assert BLOCK_K == 128


def test_mxfp8_scales_are_powers_of_two_and_elements_saturate():
    x = make("mxfp8")
    scales = e8m0_to_float(x.a_scale)
    mantissa, _ = torch.frexp(scales)
    assert torch.all(mantissa == 0.5)
    assert x.a.float().abs().max() <= 448
    # shared exponent = floor(log2(amax)) - 8: each block's largest element lands in [256, 512)
    block_max = x.a.float().abs().reshape(96, 8, 32).amax(dim=2)
    assert torch.all(block_max >= 256)


def test_mxfp8_refuses_k_not_a_multiple_of_32():
    with pytest.raises(CaseError, match="multiple of 32.*K=100"):
        quant_mode("mxfp8").validate(64, 64, 100)


def test_unknown_mode_and_flavour_are_clear_errors():
    with pytest.raises(CaseError, match="quant='int4'.*known: bf16, blockscale"):
        quant_mode("int4")
    with pytest.raises(CaseError, match="fp8='e5m2'.*e4m3fn"):
        fp8_flavour("e5m2")


def test_reference_is_fp32_gemm_of_dequantized_inputs_rounded():
    for quant in ("bf16", "ptpc", "blockscale", "mxfp8"):
        x = make(quant)
        mode = quant_mode(quant)
        a = mode.dequantize_a(x, slice(0, 96)).double()
        b = mode.dequantize_b(x).double()
        exact = a @ b.t()
        ref = compute_reference(x)
        assert ref.dtype == torch.bfloat16
        # fp32 accumulation, then one rounding to bf16: within one bf16 ulp of the exact product
        assert torch.all((ref.double() - exact).abs() <= exact.abs() * 2**-7 + 1e-6), quant


def test_reference_chunks_give_the_same_reference(monkeypatch):
    """Rows land where they belong whatever the chunking. Not bit for bit: a CPU BLAS may sum a
    7-row product in another order than a 300-row one, which can move an element across a bf16
    rounding boundary (3 of 19,200 elements on one 2-core machine); at most one bf16 ulp."""
    from pytest_gemmcheck.case import reference

    x = make("ptpc", m=300, n=64, k=128)
    whole = reference.compute_reference(x).float()
    monkeypatch.setattr(reference, "CHUNK_ELEMENTS", 1000)
    chunked = reference.compute_reference(x).float()
    one_ulp = 2.0 ** (torch.floor(torch.log2(whole.abs().clamp_min(1e-30))) - 7)
    assert bool(((chunked - whole).abs() <= one_ulp).all())
    assert int((chunked != whole).sum()) <= whole.numel() // 1000


def test_a_mode_plugs_in_by_registration():
    class Int8Like(QuantMode):
        name = "test_scaled_bf16"
        uses_fp8 = False

        def make_inputs(self, m, n, k, *, seed, device, fp8):
            base = quant_mode("bf16").make_inputs(m, n, k, seed=seed, device=device, fp8=fp8)
            base.quant = self.name
            base.a_scale = torch.tensor(2.0)
            return base

        def dequantize_a(self, inputs, rows):
            return inputs.a[rows].float() * inputs.a_scale

        def dequantize_b(self, inputs):
            return inputs.b.float()

    register_quant_mode(Int8Like())
    assert "test_scaled_bf16" in quant_mode_names()
    x = quant_mode("test_scaled_bf16").make_inputs(8, 8, 16, seed=0, device="cpu", fp8=None)
    bf16 = make("bf16", m=8, n=8, k=16, seed=0)
    assert torch.equal(compute_reference(x).float(), (compute_reference(bf16).float() * 2))
    with pytest.raises(ValueError, match="already registered"):
        register_quant_mode(type("Other", (Int8Like,), {})())
