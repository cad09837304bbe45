"""fp8="e4m3fnuz" (AMD gfx942's fp8) for every quant mode: operands in the fnuz range with no
NaN byte, scales made for that range, and references that are the GEMM of the operands decoded
from their bytes by the format's own definition, independently of torch's conversion.

e4m3fnuz: sign, 4 exponent bits with bias 8, 3 mantissa bits; no infinities, no negative zero
(0x80 is its only NaN), largest value 240."""

import pytest
import torch

from pytest_gemmcheck.case.quant import MX_BLOCK, e8m0_to_float, fp8_flavour, quant_mode, quant_mode_names
from pytest_gemmcheck.case.reference import compute_reference

FP8_MODES = [name for name in quant_mode_names() if quant_mode(name).uses_fp8]
M, N, K = 48, 136, 256
NAN_BYTE = 0x80


def make(quant, fp8="e4m3fnuz", seed=7):
    return quant_mode(quant).make_inputs(M, N, K, seed=seed, device=torch.device("cpu"), fp8=fp8_flavour(fp8))


def decode_fnuz(t: torch.Tensor) -> torch.Tensor:
    """float64 values of e4m3fnuz bytes, from the format's definition (NaN for 0x80)."""
    bits = t.view(torch.uint8).to(torch.int64)
    sign = torch.where(bits >= 0x80, -1.0, 1.0).double()
    exponent, mantissa = (bits >> 3) & 0xF, (bits & 0x7).double()
    normal = (1 + mantissa / 8) * torch.pow(2.0, (exponent - 8).double())
    subnormal = (mantissa / 8) * 2.0**-7
    values = sign * torch.where(exponent > 0, normal, subnormal)
    return torch.where(bits == NAN_BYTE, torch.full_like(values, float("nan")), values)


def test_every_fp8_mode_is_covered():
    assert set(FP8_MODES) >= {"fp8", "ptpc", "blockscale", "mxfp8"}


@pytest.mark.parametrize("quant", FP8_MODES)
def test_operands_are_fnuz_within_range_and_never_its_nan(quant):
    x = make(quant)
    for operand in (x.a, x.b):
        assert operand.dtype == torch.float8_e4m3fnuz
        assert not (operand.view(torch.uint8) == NAN_BYTE).any()  # a negative zero would be a NaN here
        values = decode_fnuz(operand)
        assert torch.isfinite(values).all() and values.abs().max() <= 240
        assert torch.equal(values.float(), operand.float())  # torch reads the bytes as the format defines them
    assert x.fp8 == "e4m3fnuz"


@pytest.mark.parametrize("quant", ["fp8", "ptpc", "blockscale"])
def test_scales_map_each_block_maximum_onto_240(quant):
    """Scales from block maxima, for fnuz's range: the largest element of every scaling block is
    240 (448 would have been e4m3fn's), and no block saturates."""
    x = make(quant)
    a = decode_fnuz(x.a).abs()
    if quant == "fp8":
        blocks = a.reshape(1, -1)
    elif quant == "ptpc":
        blocks = a
    else:
        blocks = a.reshape(M, K // 128, 128).permute(0, 1, 2).reshape(-1, 128)
    assert torch.equal(blocks.amax(dim=1), torch.full((blocks.shape[0],), 240.0, dtype=torch.float64))


def test_microscaling_exponents_are_for_fnuz():
    """mxfp8: the shared exponent is floor(log2(amax)) - 7 (240 = 1.875 * 2**7), so each block's
    largest element lands in [128, 256): at or below 240 after saturation, never NaN."""
    x = make("mxfp8")
    a = decode_fnuz(x.a).abs().reshape(M, K // MX_BLOCK, MX_BLOCK).amax(dim=2)
    assert ((a >= 128) & (a <= 240)).all()
    fn = make("mxfp8", fp8="e4m3fn")
    assert torch.equal(2 * e8m0_to_float(fn.a_scale), e8m0_to_float(x.a_scale))  # emax 7 against 8


def dequantized(quant, x):
    """A and B from the bytes, decoded by the format's definition (exact in fp32), times the
    scales in fp32, by each mode's definition."""
    a, b = decode_fnuz(x.a).float(), decode_fnuz(x.b).float()
    if quant == "fp8":
        return a * x.a_scale, b * x.b_scale
    if quant == "ptpc":
        return a * x.a_scale[:, None], b * x.b_scale[:, None]
    if quant == "blockscale":
        a_scale = x.a_scale.repeat_interleave(128, dim=1)[:, :K]
        b_scale = x.b_scale.repeat_interleave(128, dim=0).repeat_interleave(128, dim=1)[:N, :K]
        return a * a_scale, b * b_scale
    assert quant == "mxfp8"
    return (
        a * e8m0_to_float(x.a_scale).repeat_interleave(MX_BLOCK, dim=1),
        b * e8m0_to_float(x.b_scale).repeat_interleave(MX_BLOCK, dim=1),
    )


@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float16, torch.float32])
@pytest.mark.parametrize("quant", FP8_MODES)
def test_the_reference_is_the_gemm_of_the_decoded_operands(quant, out_dtype):
    """The case's reference against an fp64 GEMM of the operands decoded from their bytes: the
    operands dequantized alike, the product within fp32 accumulation over K and one rounding to
    the output dtype."""
    x = make(quant)
    a, b = dequantized(quant, x)
    mode = quant_mode(quant)
    assert torch.equal(mode.dequantize_a(x, slice(None)), a) and torch.equal(mode.dequantize_b(x), b)
    exact = a.double() @ b.double().t()
    magnitude = a.double().abs() @ b.double().abs().t()
    ref = compute_reference(x, out_dtype)
    assert ref.dtype == out_dtype and torch.isfinite(ref.float()).all()
    half_ulp = {torch.bfloat16: 2.0**-8, torch.float16: 2.0**-11, torch.float32: 2.0**-24}[out_dtype]
    bound = half_ulp * exact.abs() + 2 * K * 2.0**-24 * magnitude
    assert ((ref.double() - exact).abs() <= bound).all()


@pytest.mark.parametrize("quant", FP8_MODES)
def test_fnuz_and_fn_operands_are_the_same_activations(quant):
    """The two flavours quantize the same seeded fp32 values: their GEMMs agree to fp8's
    precision (3 mantissa bits either way)."""
    fnuz, fn = (compute_reference(make(quant, fp8=fp8), torch.float32) for fp8 in ("e4m3fnuz", "e4m3fn"))
    rel_l2 = ((fnuz - fn).norm() / fn.norm()).item()
    assert 0 < rel_l2 < 0.1  # unrelated operands would give about 1.4
