"""The seeded operands' generator (case/rng.py): the formula its docstring states, the same bits
from numpy on the CPU, the Triton kernel (in its interpreter here, compiled on a GPU) and a GPU
without Triton, bytes pinned across releases, and values as good as the quant modes assume."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from pytest_gemmcheck.case import rng
from pytest_gemmcheck.case.quant import fp8_flavour, quant_mode, quant_mode_names
from pytest_gemmcheck.records.mix import MASK32, mix32

ON_GPU = torch.cuda.is_available()


def formula(counter: int, keys: tuple[int, int, int]) -> float:
    """rng's docstring, in Python integers."""
    k1, k2, k3 = keys
    x = mix32((counter & MASK32) ^ k1)
    w1 = mix32(x ^ k2 ^ (((counter >> 32) * rng.HI_MULTIPLIER) & MASK32))
    w2 = mix32(w1 ^ k3)
    return ((w1 & 0xFFFF) + (w1 >> 16) + (w2 & 0xFFFF) + (w2 >> 16) - rng.HALVES_MEAN) * 2.0**-16


# Counters at both ends of every chunk, and past 2**32 (the high word keys the second round).
FIRSTS = [0, 2**32 - rng.CHUNK, 2**32, 5 << 40]


@pytest.mark.parametrize("first", FIRSTS)
def test_values_are_the_documented_formula(first):
    keys = rng.stream_keys(7, "a")
    values = rng.bell_numpy(2 * rng.CHUNK + 3, keys, first)
    for offset in (0, 1, rng.CHUNK - 1, rng.CHUNK, 2 * rng.CHUNK, 2 * rng.CHUNK + 2):
        assert values[offset] == formula(first + offset, keys), offset


def test_a_short_stream_is_the_start_of_a_long_one():
    keys = rng.stream_keys(3, "b")
    long = rng.bell_numpy(3 * rng.CHUNK + 11, keys)
    for numel in (1, 2, 5, 1000, rng.CHUNK + 1):
        assert np.array_equal(rng.bell_numpy(numel, keys), long[:numel])
    words = rng.words_numpy(rng.CHUNK + 5, keys)
    assert words[rng.CHUNK + 4] == mix32(mix32((rng.CHUNK + 4) ^ keys[0]) ^ keys[1])


def test_first_counter_must_start_a_chunk():
    with pytest.raises(ValueError, match="no multiple"):
        rng.bell_numpy(4, rng.stream_keys(0, "a"), first=3)


# --- the same bytes across releases ---------------------------------------------------------

# Inputs of a few modes, flavours, shapes (partial blocks, one element) and seeds (one past
# 2**31), and a bell stream across a chunk's end: sha256 of their bytes in this order. A change
# here changes every stored case's inputs and the history's meaning: it must be deliberate, and
# said in the changelog.
PINNED_INPUTS = [
    ("bf16", 96, 160, 256, 1234, "e4m3fn"),
    ("fp8", 1, 1, 1, 99, "e4m3fnuz"),
    ("ptpc", 64, 48, 128, 0, "e4m3fn"),
    ("blockscale", 5, 200, 300, 7, "e4m3fnuz"),
    ("mxfp8", 33, 17, 64, 2**31 + 5, "e4m3fn"),
]
PINNED_SHA256 = "cb244f8f62d9e04334e4809be67ff143ea66cd817bd271cfec5dcee9696c9de9"


def pinned_bytes(device: str = "cpu") -> str:
    digest = hashlib.sha256()
    for quant, m, n, k, seed, fp8 in PINNED_INPUTS:
        x = quant_mode(quant).make_inputs(m, n, k, seed=seed, device=torch.device(device), fp8=fp8_flavour(fp8))
        for tensor in x:
            if tensor is not None:
                digest.update(tensor.reshape(-1).contiguous().view(torch.uint8).cpu().numpy().tobytes())
    digest.update(rng.bell((rng.CHUNK + 17,), 5, "pinned", device).cpu().numpy().tobytes())
    return digest.hexdigest()


def test_bytes_are_pinned_across_releases():
    assert pinned_bytes() == PINNED_SHA256


# --- the same bytes on every device ---------------------------------------------------------

TRITON = importlib.util.find_spec("triton") is not None


@pytest.mark.skipif(not TRITON, reason="no Triton")
def test_triton_kernel_gives_the_cpu_bits_in_its_interpreter():
    """The GPU's kernel, run by Triton's interpreter on CPU tensors (in a process of its own:
    Triton reads the flag when the kernel is defined), at the chunk ends and past 2**32."""
    script = textwrap.dedent(f"""
        import numpy as np, torch
        from pytest_gemmcheck.case import rng
        from pytest_gemmcheck.case.rng_kernel import bell_on_gpu
        for seed, name, numel, first in [(0, "a", 1, 0), (1, "b", 1000, 0), (2, "a#x", rng.CHUNK + 3, 0),
                                         (3, "b", 3000, {2**32 - rng.CHUNK}), (4, "a", 2048, {5 << 40})]:
            keys = rng.stream_keys(seed, name)
            cpu = rng.bell_numpy(numel, keys, first)
            kernel = bell_on_gpu(numel, keys, torch.device("cpu"), first).numpy()
            assert cpu.view(np.uint32).tobytes() == kernel.view(np.uint32).tobytes(), (seed, name, numel, first)
        print("same bits")
    """)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "same bits"


@pytest.mark.skipif(not ON_GPU, reason="no GPU")
def test_gpu_gives_the_cpu_bytes(monkeypatch):
    """On a GPU (the Triton kernel where Triton is, else the CPU's bits copied): every quant mode
    and flavour, and the pinned digest."""
    assert pinned_bytes("cuda") == pinned_bytes("cpu") == PINNED_SHA256
    for name in quant_mode_names():
        mode = quant_mode(name)
        for fp8 in ("e4m3fn", "e4m3fnuz") if mode.uses_fp8 else ("e4m3fn",):
            for m, n, k in ((96, 160, 256), (300, 129, 320)):
                made = {
                    device: mode.make_inputs(m, n, k, seed=11, device=torch.device(device), fp8=fp8_flavour(fp8))
                    for device in ("cpu", "cuda")
                }
                assert made["cuda"].digest() == made["cpu"].digest(), (name, fp8, m, n, k)
    monkeypatch.setattr(rng, "_on_gpu_kernel", lambda device: False)
    assert pinned_bytes("cuda") == PINNED_SHA256


# --- as good as the quant modes assume -------------------------------------------------------

SAMPLES = 1 << 20


def test_values_are_bell_shaped():
    """Irwin-Hall of four uniforms: mean 0, variance 1/3, no skew, excess kurtosis -0.3, inside
    (-2, 2), in steps of 2**-16 (each bound about five standard errors)."""
    x = rng.bell((SAMPLES,), 1, "a").double()
    assert abs(x.mean().item()) < 5 * (1 / 3) ** 0.5 / SAMPLES**0.5
    variance = x.var().item()
    assert abs(variance - 1 / 3) < 0.002
    z = (x - x.mean()) / variance**0.5
    assert abs((z**3).mean().item()) < 0.01
    assert abs((z**4).mean().item() - 3 - (-0.3)) < 0.02
    assert x.abs().max().item() < 2
    assert torch.equal(x * 2**16, (x * 2**16).round())
    # the density's shape: the share within one, two standard deviations (Irwin-Hall(4): 0.6693, 0.9575)
    sigma = (1 / 3) ** 0.5
    assert abs((x.abs() < sigma).double().mean().item() - 0.6693) < 0.003
    assert abs((x.abs() < 2 * sigma).double().mean().item() - 0.9575) < 0.002


def test_words_are_uniform():
    words = rng.words_numpy(SAMPLES, rng.stream_keys(2, "w"))
    for shift in (0, 8, 16, 24):  # each byte of the word, 256 bins: chi-square with 255 degrees of freedom
        counts = np.bincount((words >> np.uint32(shift)) & np.uint32(0xFF), minlength=256)
        expected = SAMPLES / 256
        chi2 = float(((counts - expected) ** 2 / expected).sum())
        assert chi2 < 255 + 6 * (2 * 255) ** 0.5, (shift, chi2)


def test_streams_and_neighbours_are_uncorrelated():
    a = rng.bell((SAMPLES,), 1, "a").double()
    bound = 5 / SAMPLES**0.5
    for other in (rng.bell((SAMPLES,), 1, "b"), rng.bell((SAMPLES,), 2, "a"), rng.bell((SAMPLES,), 1, "a#1")):
        assert abs(torch.corrcoef(torch.stack([a, other.double()]))[0, 1].item()) < bound
    assert abs(torch.corrcoef(torch.stack([a[:-1], a[1:]]))[0, 1].item()) < bound
    assert abs(torch.corrcoef(torch.stack([a[:-256], a[256:]]))[0, 1].item()) < bound  # a row's length apart


def test_power_of_two_gains_are_uniform_in_their_span():
    gains = rng.power_of_two_gains(100_000, 3, "a.rowgain", 2)
    exponents = torch.log2(gains).round().to(torch.int64)
    assert torch.equal(torch.exp2(exponents.double()).float(), gains)
    counts = torch.bincount(exponents + 2, minlength=5)
    assert len(counts) == 5 and (counts - 20_000).abs().max().item() < 5 * 126


def test_same_seed_same_bits_and_every_key_matters():
    assert torch.equal(rng.bell((64, 64), 5, "a"), rng.bell((64, 64), 5, "a"))
    base = rng.bell((4096,), 5, "a")
    for other in (rng.bell((4096,), 6, "a"), rng.bell((4096,), 5, "b")):
        assert (base != other).double().mean().item() > 0.99
    assert len(set(rng.stream_keys(5, "a"))) == 3


def test_a_stream_too_long_to_keep_is_handed_out_as_made(monkeypatch):
    made = np.zeros(rng.PREFIX_ELEMENTS + 1, np.float32)
    monkeypatch.setattr(rng, "bell_numpy", lambda numel, keys, first=0: made)
    assert rng._bell_prefix(len(made), (1, 2, 3)) is made  # no copy of tens of MB kept or made


def test_gains_from_kept_words_are_those_hashed_for_every_count(monkeypatch):
    monkeypatch.setattr(rng, "_prefixes", {})
    keys = rng.stream_keys(4, "a.rowgain")
    for count in (3, 300, rng.CHUNK + 7, 5, rng.PREFIX_ELEMENTS + 1):
        words = rng.words_numpy(count, keys)
        expected = np.ldexp(np.float32(1), (words % np.uint32(5)).astype(np.int32) - 2).astype(np.float32)
        gains = rng.power_of_two_gains(count, 4, "a.rowgain", 2)
        assert np.array_equal(gains.numpy(), expected)
        gains.mul_(3)  # the gains handed out are their own: the kept words stay as they were
    assert list(rng._prefixes) == [("words_numpy", keys)]


def test_a_kept_stream_grows_to_the_power_of_two_asked_for_and_keeps_its_bits(monkeypatch):
    monkeypatch.setattr(rng, "_prefixes", {})
    keys = rng.stream_keys(7, "a")
    hashed = []
    made = rng.bell_numpy

    def bell_numpy(numel, keys, first=0):  # the kept stream's name is the function's
        hashed.append(numel)
        return made(numel, keys, first)

    monkeypatch.setattr(rng, "bell_numpy", bell_numpy)
    # a 64x64 tensor of a new seed hashes 4096 values, not a chunk; growing doubles, then adds chunks
    for numel, kept in [(4096, 4096), (3, 4096), (4097, 8192), (20000, 32768), (rng.CHUNK + 1, 2 * rng.CHUNK)]:
        values = rng.bell((numel,), 7, "a").numpy()
        assert np.array_equal(values, made(numel, keys))
        assert len(rng._prefixes[("bell_numpy", keys)]) == kept
    assert hashed == [4096, 4096, 8192, 16384, 32768, rng.CHUNK]


def test_a_streams_kept_first_values_give_every_shape_its_own_bits(monkeypatch):
    monkeypatch.setattr(rng, "_prefixes", {})
    monkeypatch.setattr(rng, "PREFIX_STREAMS", 2)
    keys = [rng.stream_keys(seed, "a") for seed in range(3)]
    # growing past a chunk, shrinking, another stream pushing the first out, then beyond the limit
    for numel, stream in [(7, 0), (rng.CHUNK + 5, 0), (3, 0), (100, 1), (50, 2), (2 * rng.CHUNK + 1, 0), (9, 1)]:
        values = rng.bell((numel,), stream, "a").numpy()
        assert np.array_equal(values, rng.bell_numpy(numel, keys[stream]))
        values[:] = 0  # a tensor handed out is its own: the kept values stay as they were
    assert len(rng._prefixes) == 2
    big = rng.PREFIX_ELEMENTS + 1
    assert np.array_equal(rng.bell((big,), 0, "a").numpy(), rng.bell_numpy(big, keys[0]))
