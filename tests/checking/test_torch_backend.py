"""The torch check's shorter way for a clean output of one chunk gives the numbers of its general
way, number for number, and leaves any output with a wrong element to it."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from pytest_gemmcheck.checking import torch_backend
from pytest_gemmcheck.checking.rule import Tolerance


def outputs():
    """(name, out, ref): clean outputs of a few kinds, each with its reference."""
    g = torch.Generator().manual_seed(3)
    ref = (torch.randn(37, 53, generator=g) * 4).to(torch.bfloat16)
    near = (ref.float() * (1 + 0.01 * torch.randn(37, 53, generator=g))).to(torch.bfloat16)
    zero_row = ref.clone()
    zero_row[5] = 0
    tiny = (ref.float() * 1e-30).to(torch.float32)
    yield "equal", ref.clone(), ref
    yield "within the rule", near, ref
    yield "a row of zeros in both", zero_row.clone(), zero_row
    yield "fp32, tiny", tiny * (1 + 1e-3), tiny
    yield "one column", ref[:, :1].clone(), ref[:, :1].contiguous()


def numbers(result):
    accuracy, diffs = result
    return dataclasses.asdict(accuracy), [dataclasses.asdict(d) for d in diffs]


@pytest.mark.parametrize("tile", [None, (16, 16)])
@pytest.mark.parametrize("tol", [Tolerance(), Tolerance(floor=0.0), Tolerance(floor=1e-45), Tolerance(rtol=0.3)])
def test_the_clean_way_gives_the_general_numbers(monkeypatch, tile, tol):
    for name, out, ref in outputs():
        rowmax = torch_backend.row_max(ref)
        short = torch_backend.check_launch(out, ref, rowmax, tol, tile)
        with monkeypatch.context() as patched:
            patched.setattr(torch_backend, "_clean_in_one_chunk", lambda *args: None)
            general = torch_backend.check_launch(out, ref, rowmax, tol, tile)
        assert numbers(short) == numbers(general), name


def test_an_output_with_a_wrong_element_goes_the_general_way(monkeypatch):
    ref = torch.ones(8, 8, dtype=torch.bfloat16)
    for bad in (2.0, float("nan")):
        out = ref.clone()
        out[3, 4] = bad
        assert torch_backend._clean_in_one_chunk(out, ref, torch_backend.row_max(ref), Tolerance()) is None
        accuracy, _ = torch_backend.check_launch(out, ref, torch_backend.row_max(ref), Tolerance(), (4, 4))
        assert accuracy.wrong.elements == 1 and accuracy.wrong.row_ids == [3] and accuracy.wrong.tile_ids == [(0, 1)]


def test_a_reference_changed_in_place_is_worked_out_again():
    """The reference's own terms are held for that tensor as it is: an output equal to the
    reference as it was is wrong once the reference is changed in place, or against another
    reference of the same shape (made where the first one was freed)."""
    g = torch.Generator().manual_seed(5)
    ref = torch.randn(16, 24, generator=g).to(torch.bfloat16)
    out = ref.clone()
    rowmax = torch_backend.row_max(ref)
    assert torch_backend.check_launch(out, ref, rowmax, Tolerance())[0].wrong.elements == 0
    ref.mul_(2)
    assert torch_backend.check_launch(out, ref, rowmax, Tolerance())[0].wrong.elements > out.numel() // 2
    rowmax.mul_(0.5)  # a rowmax changed alone: its floor scales change, and so does the rule's number
    assert torch_backend.check_launch(ref.clone(), ref, rowmax, Tolerance())[0].wrong.elements == 0
    del ref
    other = out.mul(3)
    accuracy = torch_backend.check_launch(out, other, torch_backend.row_max(other), Tolerance())[0]
    assert accuracy.wrong.elements > out.numel() // 2


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_row_max_of_one_chunk_is_the_chunked_ones(monkeypatch, dtype):
    """The row maxima of a reference of one chunk, by its three ops, equal the chunked way's bit
    for bit, a row holding a NaN or an inf included (each is that row's maximum)."""
    g = torch.Generator().manual_seed(7)
    ref = (torch.randn(9, 33, generator=g) * 100).to(dtype)
    ref[2, 5] = float("nan")
    ref[4, 0] = float("-inf")
    ref[6] = 0
    one = torch_backend.row_max(ref)
    monkeypatch.setattr(torch_backend, "CHUNK_ELEMENTS", 32)  # a few rows a chunk
    chunked = torch_backend.row_max(ref)
    assert one.dtype == chunked.dtype == torch.float32
    assert torch.equal(one.view(torch.int32), chunked.view(torch.int32))
    assert one[2].isnan() and one[4] == float("inf") and one[6] == 0


def test_a_reference_made_under_inference_mode_is_checked_and_changed_in_place_seen():
    """A tensor made under torch.inference_mode has no version counter: its terms are worked out
    at each check, so an output equal to it as it was is wrong once it is changed in place."""
    with torch.inference_mode():
        ref = (torch.randn(12, 20, generator=torch.Generator().manual_seed(9)) * 3).to(torch.bfloat16)
        rowmax = torch_backend.row_max(ref)
        out = ref.clone()
        assert torch_backend.check_launch(out, ref, rowmax, Tolerance())[0].wrong.elements == 0
        ref.mul_(2)
        assert torch_backend.check_launch(out, ref, rowmax, Tolerance())[0].wrong.elements > out.numel() // 2


def test_a_case_run_under_inference_mode_passes(make_case):
    """Its reference and row maxima are made under the mode (inference tensors): a correct kernel
    passes, a wrong one fails."""
    with torch.inference_mode():
        case = make_case("inference", m=24, n=40, k=16, device="cpu")
        x = case.inputs()
        assert case.run(lambda out: torch.matmul(x.a, x.b.t(), out=out), repeat=4).verdict == "pass"
        wrong = make_case("inference", m=24, n=40, k=16, device="cpu")
        y = wrong.inputs()
        result = wrong.run(lambda out: torch.matmul(y.a, y.b.t(), out=out).mul_(2), repeat=4, check=False)
        assert result.verdict == "regression" and len(result.bad_launches) == 4
