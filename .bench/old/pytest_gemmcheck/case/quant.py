"""Quant modes: how a case's operands and scales are made, and how they dequantize.

Layout everywhere: A is [M, K], B is [N, K] (transposed, as GEMM kernels take it), the
output is [M, N]. A mode makes seeded fp32 "activations" and "weights", quantizes them the
way real inference code does (scales from block maxima), and can dequantize them again for
the reference. New modes plug in through the ``pytest_gemmcheck_quant_modes`` hook or
:func:`register_quant_mode`; nothing here needs editing for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import torch

from ..errors import CaseError
from . import rng

BLOCK_K = 128  # blockscale: A scaled per 1x128, B per 128x128
MX_BLOCK = 32  # mxfp8: one e8m0 exponent per 32 consecutive K elements


@dataclass(frozen=True)
class Fp8Flavour:
    name: str
    dtype: torch.dtype
    max_value: float
    emax: int  # exponent of the largest normal, for microscaling's shared exponent


def fp8_flavour(name: str) -> Fp8Flavour:
    flavours = {
        # NVIDIA and AMD gfx950
        "e4m3fn": Fp8Flavour("e4m3fn", torch.float8_e4m3fn, 448.0, 8),
        # AMD gfx942 (MI300): bias 8, no negative zero, max 240
        "e4m3fnuz": Fp8Flavour("e4m3fnuz", torch.float8_e4m3fnuz, 240.0, 7),
    }
    try:
        return flavours[name]
    except KeyError:
        raise CaseError(f"fp8={name!r} is not an fp8 flavour; choose one of {sorted(flavours)}") from None


@dataclass
class Inputs:
    """Seeded operands of a case. ``a``/``b`` are the tensors a kernel takes; scales are
    ``None`` for bf16, 0-d for per-tensor fp8, and shaped as DESIGN.md's quant table says
    otherwise."""

    quant: str
    a: torch.Tensor
    b: torch.Tensor
    a_scale: torch.Tensor | None = None
    b_scale: torch.Tensor | None = None
    fp8: str | None = None
    seed: int = 0

    def __repr__(self) -> str:
        # shapes and dtypes, not the tensors' values: tracebacks with locals (-l) stay readable
        parts = [
            f"{name}={list(t.shape)} {str(t.dtype).removeprefix('torch.')}"
            for name, t in (("a", self.a), ("b", self.b), ("a_scale", self.a_scale), ("b_scale", self.b_scale))
            if t is not None
        ]
        return f"<Inputs {self.quant} seed {self.seed} on {self.a.device}: {', '.join(parts)}>"

    def __iter__(self):
        # x.a, x.b, x.a_scale, x.b_scale = case.inputs() also works
        return iter((self.a, self.b, self.a_scale, self.b_scale))

    @property
    def device(self) -> torch.device:
        return self.a.device

    def digest(self) -> str:
        """sha256 (16 hex digits) of the operands' and scales' bytes: equal on every machine
        and device for the same case and seed."""
        import hashlib

        h = hashlib.sha256(self.quant.encode())
        for t in (self.a, self.b, self.a_scale, self.b_scale):
            if t is not None:
                h.update(t.detach().reshape(-1).contiguous().view(torch.uint8).cpu().numpy().tobytes())
        return h.hexdigest()[:16]

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.a, self.b, self.a_scale, self.b_scale) if t is not None)


class QuantMode:
    """One way of making and dequantizing operands. Subclass and register to add a mode."""

    name: str = ""
    #: whether operands are fp8 and the case's ``fp8`` flavour applies
    uses_fp8: bool = True

    def validate(self, m: int, n: int, k: int) -> None:
        """Raise :class:`CaseError` for shapes this mode cannot represent."""

    def make_inputs(self, m: int, n: int, k: int, *, seed: int, device: torch.device, fp8: Fp8Flavour) -> Inputs:
        raise NotImplementedError

    def dequantize_a(self, inputs: Inputs, rows: slice) -> torch.Tensor:
        """fp32 A[rows, :], exactly as the scales define it."""
        raise NotImplementedError

    def dequantize_b(self, inputs: Inputs) -> torch.Tensor:
        """fp32 B [N, K]."""
        raise NotImplementedError


# --- making operands -------------------------------------------------------------------


def _activations(rows: int, cols: int, seed: int, name: str, device) -> torch.Tensor:
    """fp32 [rows, cols]: bell-shaped values (rng.bell), each row scaled by a power of two in [1/4, 4]."""
    values = rng.bell((rows, cols), seed, name, device)
    return values.mul_(rng.power_of_two_gains(rows, seed, f"{name}.rowgain", 2, device)[:, None])


def _with_block_gains(x: torch.Tensor, block: int, seed: int, name: str) -> torch.Tensor:
    """Scale each (row, K block) by its own power of two: what per-block scales are for."""
    rows, cols = x.shape
    blocks = -(-cols // block)
    gains = rng.power_of_two_gains(rows * blocks, seed, f"{name}.blockgain", 2, x.device).reshape(rows, blocks)
    if cols % block == 0:  # in place, through a view of the blocks: no [rows, cols] copy of the gains
        x.view(rows, blocks, block).mul_(gains[:, :, None])
        return x
    return x * gains.repeat_interleave(block, dim=1)[:, :cols]


def _pad_to(x: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    return torch.nn.functional.pad(x, (0, cols - x.shape[1], 0, rows - x.shape[0]))


def _scales_from_amax(amax: torch.Tensor, fp8: Fp8Flavour) -> tuple[torch.Tensor, torch.Tensor]:
    """(scale, 1 / scale) for block maxima ``amax``, on amax's device. Worked out on the CPU:
    a GPU divides by a Python number through a reciprocal, which rounds differently, and the
    operands must be the same bytes on every device. Quantizing multiplies by the reciprocal
    (an IEEE multiply rounds alike everywhere)."""
    on_cpu = amax.detach().to("cpu", torch.float32)
    scale = torch.where(on_cpu > 0, on_cpu / fp8.max_value, torch.ones_like(on_cpu))
    return scale.to(amax.device), (1.0 / scale).to(amax.device)


def _to_fp8(x: torch.Tensor, fp8: Fp8Flavour) -> torch.Tensor:
    """``x`` (a temporary: clamped in place) cast to fp8."""
    # clamp first: the fnuz cast turns out-of-range values into NaN instead of saturating
    return x.clamp_(-fp8.max_value, fp8.max_value).to(fp8.dtype)


class Bf16(QuantMode):
    name = "bf16"
    uses_fp8 = False

    def make_inputs(self, m, n, k, *, seed, device, fp8):
        a = _activations(m, k, seed, "a", device).to(torch.bfloat16)
        b = _activations(n, k, seed, "b", device).to(torch.bfloat16)
        return Inputs(self.name, a, b, seed=seed)

    def dequantize_a(self, inputs, rows):
        return inputs.a[rows].float()

    def dequantize_b(self, inputs):
        return inputs.b.float()


class Fp8PerTensor(QuantMode):
    name = "fp8"

    def make_inputs(self, m, n, k, *, seed, device, fp8):
        a = _activations(m, k, seed, "a", device)
        b = _activations(n, k, seed, "b", device)
        a_scale, a_inv = _scales_from_amax(a.abs().amax(), fp8)
        b_scale, b_inv = _scales_from_amax(b.abs().amax(), fp8)
        return Inputs(
            self.name, _to_fp8(a.mul_(a_inv), fp8), _to_fp8(b.mul_(b_inv), fp8), a_scale, b_scale, fp8.name, seed
        )

    def dequantize_a(self, inputs, rows):
        return inputs.a[rows].float() * inputs.a_scale

    def dequantize_b(self, inputs):
        return inputs.b.float() * inputs.b_scale


class PerTokenPerChannel(QuantMode):
    name = "ptpc"

    def make_inputs(self, m, n, k, *, seed, device, fp8):
        a = _activations(m, k, seed, "a", device)
        b = _activations(n, k, seed, "b", device)
        a_scale, a_inv = _scales_from_amax(a.abs().amax(dim=1), fp8)  # [M]
        b_scale, b_inv = _scales_from_amax(b.abs().amax(dim=1), fp8)  # [N]
        return Inputs(
            self.name,
            _to_fp8(a.mul_(a_inv[:, None]), fp8),
            _to_fp8(b.mul_(b_inv[:, None]), fp8),
            a_scale,
            b_scale,
            fp8.name,
            seed,
        )

    def dequantize_a(self, inputs, rows):
        return inputs.a[rows].float() * inputs.a_scale[rows, None]

    def dequantize_b(self, inputs):
        return inputs.b.float() * inputs.b_scale[:, None]


def _ceil_div(x: int, y: int) -> int:
    return -(-x // y)


class BlockScale(QuantMode):
    """A scaled per 1x128 (row, K block), B per 128x128. M, N and K need not be multiples of
    128: the last block is partial, its scale taken over the elements it has (as DeepGEMM's
    ``ceil_div`` layouts do)."""

    name = "blockscale"

    def make_inputs(self, m, n, k, *, seed, device, fp8):
        kb = _ceil_div(k, BLOCK_K)
        nb = _ceil_div(n, BLOCK_K)
        a = _with_block_gains(_activations(m, k, seed, "a", device), BLOCK_K, seed, "a")
        b = _with_block_gains(_activations(n, k, seed, "b", device), BLOCK_K, seed, "b")
        a_amax = _pad_to(a.abs(), m, kb * BLOCK_K).reshape(m, kb, BLOCK_K).amax(dim=2)
        b_amax = _pad_to(b.abs(), nb * BLOCK_K, kb * BLOCK_K).reshape(nb, BLOCK_K, kb, BLOCK_K).amax(dim=(1, 3))
        a_scale, a_inv = _scales_from_amax(a_amax, fp8)  # [M, ceil(K/128)]
        b_scale, b_inv = _scales_from_amax(b_amax, fp8)  # [ceil(N/128), ceil(K/128)]
        a_q = _to_fp8(a.mul_(_expand_a(a_inv, m, k)), fp8)
        b_q = _to_fp8(b.mul_(_expand_b(b_inv, n, k)), fp8)
        return Inputs(self.name, a_q, b_q, a_scale, b_scale, fp8.name, seed)

    def dequantize_a(self, inputs, rows):
        a = inputs.a[rows]
        return a.float() * _expand_a(inputs.a_scale[rows], a.shape[0], a.shape[1])

    def dequantize_b(self, inputs):
        n, k = inputs.b.shape
        return inputs.b.float() * _expand_b(inputs.b_scale, n, k)


def _expand_a(a_scale: torch.Tensor, rows: int, k: int) -> torch.Tensor:
    return a_scale.repeat_interleave(BLOCK_K, dim=1)[:rows, :k]


def _expand_b(b_scale: torch.Tensor, n: int, k: int) -> torch.Tensor:
    return b_scale.repeat_interleave(BLOCK_K, dim=0).repeat_interleave(BLOCK_K, dim=1)[:n, :k]


def e8m0_from_exponents(exponents: torch.Tensor) -> torch.Tensor:
    """Biased e8m0 bytes (2**e stored as e + 127), as torch.float8_e8m0fnu where available."""
    biased = (exponents + 127).to(torch.uint8)
    e8m0 = getattr(torch, "float8_e8m0fnu", None)
    return biased.view(e8m0) if e8m0 is not None else biased


def e8m0_to_float(scale: torch.Tensor) -> torch.Tensor:
    """fp32 2**e from e8m0 bytes, exactly."""
    return rng.exp2_exact(scale.view(torch.uint8).to(torch.int32) - 127)


class Mxfp8(QuantMode):
    """OCP microscaling fp8: one shared power-of-two exponent (e8m0) per 32 K elements,
    ``floor(log2(amax)) - emax`` of the element format; elements saturate at the format's max."""

    name = "mxfp8"

    def validate(self, m, n, k):
        if k % MX_BLOCK:
            raise CaseError(
                f"quant='mxfp8' needs K to be a multiple of {MX_BLOCK} (one e8m0 scale per {MX_BLOCK} K "
                f"elements); got K={k}"
            )

    def _quantize(self, x: torch.Tensor, fp8: Fp8Flavour):
        rows, k = x.shape
        blocks = x.reshape(rows, k // MX_BLOCK, MX_BLOCK)
        amax = blocks.abs().amax(dim=2)
        _, exp = torch.frexp(torch.where(amax > 0, amax, torch.ones_like(amax)))
        shared = (exp.to(torch.int32) - 1) - fp8.emax  # floor(log2(amax)) - emax
        shared = shared.clamp(-127, 127)
        scaled = blocks.mul_(rng.exp2_exact(-shared.clamp(-126, 126))[:, :, None])  # x is a temporary
        return _to_fp8(scaled.reshape(rows, k), fp8), e8m0_from_exponents(shared)

    def make_inputs(self, m, n, k, *, seed, device, fp8):
        self.validate(m, n, k)
        a = _with_block_gains(_activations(m, k, seed, "a", device), MX_BLOCK, seed, "a")
        b = _with_block_gains(_activations(n, k, seed, "b", device), MX_BLOCK, seed, "b")
        a_q, a_scale = self._quantize(a, fp8)
        b_q, b_scale = self._quantize(b, fp8)
        return Inputs(self.name, a_q, b_q, a_scale, b_scale, fp8.name, seed)

    def dequantize_a(self, inputs, rows):
        a = inputs.a[rows]
        return a.float() * e8m0_to_float(inputs.a_scale[rows]).repeat_interleave(MX_BLOCK, dim=1)

    def dequantize_b(self, inputs):
        return inputs.b.float() * e8m0_to_float(inputs.b_scale).repeat_interleave(MX_BLOCK, dim=1)


_BUILTIN: tuple[type[QuantMode], ...] = (Bf16, Fp8PerTensor, PerTokenPerChannel, BlockScale, Mxfp8)
_REGISTRY: dict[str, QuantMode] = {cls.name: cls() for cls in _BUILTIN}


def register_quant_mode(mode: QuantMode, *, replace: bool = False) -> None:
    """Add a quant mode. Refuses to silently replace an existing name."""
    if not mode.name:
        raise ValueError("a QuantMode needs a name")
    if mode.name in _REGISTRY and not replace and _REGISTRY[mode.name] is not mode:
        raise ValueError(f"quant mode {mode.name!r} is already registered")
    _REGISTRY[mode.name] = mode


def register_all(modes: Iterable[QuantMode]) -> None:
    for mode in modes:
        register_quant_mode(mode, replace=type(_REGISTRY.get(mode.name)) is type(mode))


def quant_mode(name: str) -> QuantMode:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise CaseError(f"quant={name!r} is not a known quant mode; known: {', '.join(sorted(_REGISTRY))}") from None


def quant_mode_names() -> list[str]:
    return sorted(_REGISTRY)
