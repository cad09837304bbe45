"""Example GEMM kernels for the CPU, written the way GPU kernels compute -- not the way the
reference does.

The reference dequantizes A and B to fp32 and multiplies once. These kernels keep operands
quantized, walk the output in tiles and K in blocks, and apply scales where real kernels do:
per K block for blockscale and mxfp8, in the epilogue for per-tensor and per-token scales.
Two accumulators (fp32, fp64) and two K orders (forward, reverse) give independent correct
implementations to test the checker against.

``FaultInjector`` is a test double, not a kernel: it wraps a correct kernel and corrupts its
output on chosen launches, to show what each detector catches.
"""

from __future__ import annotations

import torch

from pytest_gemmcheck.case.quant import BLOCK_K, MX_BLOCK, e8m0_to_float


def _k_blocks(k: int, block: int, reverse: bool):
    starts = list(range(0, k, block))
    return reversed(starts) if reverse else starts


def tiled_gemm(x, out, *, tile=(64, 64), acc=torch.float32, reverse_k=False, k_block=256):
    """out = A @ B^T for any quant mode of ``x`` (a case's inputs), tile by tile, on their device.

    acc: accumulator dtype (torch.float32 or torch.float64). reverse_k walks K blocks
    backwards, another summation order.
    """
    m, k = x.a.shape
    n = x.b.shape[0]
    tm, tn = tile
    if x.quant in ("blockscale", "mxfp8"):
        k_block = BLOCK_K if x.quant == "blockscale" else MX_BLOCK
    for i0 in range(0, m, tm):
        i1 = min(m, i0 + tm)
        for j0 in range(0, n, tn):
            j1 = min(n, j0 + tn)
            c = torch.zeros((i1 - i0, j1 - j0), dtype=acc, device=x.a.device)
            for k0 in _k_blocks(k, k_block, reverse_k):
                k1 = min(k, k0 + k_block)
                a = x.a[i0:i1, k0:k1].to(acc)
                b = x.b[j0:j1, k0:k1].to(acc)
                partial = a @ b.t()
                if x.quant == "blockscale":
                    kb = k0 // BLOCK_K
                    a_s = x.a_scale[i0:i1, kb].to(acc)  # per row, this K block
                    b_s = x.b_scale[torch.arange(j0, j1, device=x.a.device) // BLOCK_K, kb].to(acc)  # per 128-col block
                    partial = partial * a_s[:, None] * b_s[None, :]
                elif x.quant == "mxfp8":
                    kb = k0 // MX_BLOCK
                    a_s = e8m0_to_float(x.a_scale[i0:i1, kb]).to(acc)
                    b_s = e8m0_to_float(x.b_scale[j0:j1, kb]).to(acc)
                    partial = partial * a_s[:, None] * b_s[None, :]
                c += partial
            # epilogue scales
            if x.quant == "fp8":
                c = c * x.a_scale.to(acc) * x.b_scale.to(acc)
            elif x.quant == "ptpc":
                c = c * x.a_scale[i0:i1, None].to(acc) * x.b_scale[None, j0:j1].to(acc)
            out[i0:i1, j0:j1] = c.to(out.dtype)
    return None


def bf16_matmul(x, out):
    """bf16 GEMM through torch (its own blocking and fp32 accumulation)."""
    assert x.quant == "bf16"
    torch.matmul(x.a, x.b.t(), out=out)


def allocating_gemm(x, out):
    """A kernel that ignores ``out`` and returns its own output (like torch._scaled_mm without
    ``out=``)."""
    result = torch.empty_like(out)
    tiled_gemm(x, result)
    return result


class FaultInjector:
    """TEST DOUBLE: runs a correct kernel, then corrupts the output on chosen launches.

    faults:
      "tile"       scale a tile_m x tile_n tile by 1.5
      "row"        negate one row
      "elements"   move ``count`` scattered elements by ``fraction`` of their row's largest |value|
      "unwritten"  leave a tile unwritten (put the poison back)
      "subtle"     the same, on elements at least half their row's largest |value| (so that a
                   small ``fraction`` stays under the accuracy rule everywhere)
    """

    def __init__(self, kernel, fault: str, launches, *, tile=(16, 16), at=(0, 0), count=4, fraction=0.5):
        self.kernel = kernel
        self.fault = fault
        self.bad_launches = set(launches)
        self.tile = tile
        self.at = at
        self.count = count
        self.fraction = fraction
        self.launch_count = 0

    def __call__(self, out):
        self.launch_count += 1
        result = self.kernel(out)
        target = out if result is None else result
        if self.launch_count in self.bad_launches:
            self.corrupt(target)
        return result

    def _spots(self, out):
        m, n = out.shape
        # spread over the output, away from each other, deterministic
        return [((7 + 131 * i) % m, (3 + 97 * i) % n) for i in range(self.count)]

    def corrupt(self, out):
        r, c = self.at
        tm, tn = self.tile
        if self.fault == "tile":
            out[r : r + tm, c : c + tn] *= 1.5
        elif self.fault == "row":
            out[r] = -out[r]
        elif self.fault in ("elements", "subtle"):
            rowmax = out.float().abs().amax(dim=1)
            spots = self._spots(out) if self.fault == "elements" else self._largest_spots(out)
            for i, j in spots:
                out[i, j] = (out[i, j].float() + self.fraction * rowmax[i]).to(out.dtype)
        elif self.fault == "unwritten":
            out[r : r + tm, c : c + tn] = float("nan")
        else:
            raise ValueError(f"unknown fault {self.fault!r}")

    def _largest_spots(self, out):
        # elements at least half their row's largest |value|: a 2%-of-row-max move stays
        # under the 5% accuracy rule there, so only the consistency detector can see it
        spots = []
        mags = out.float().abs()
        rowmax = mags.amax(dim=1)
        for i in range(out.shape[0]):
            cols = torch.nonzero(mags[i] >= 0.5 * rowmax[i]).flatten().tolist()
            for j in cols:
                spots.append((i, j))
                if len(spots) == self.count:
                    return spots
        return spots
