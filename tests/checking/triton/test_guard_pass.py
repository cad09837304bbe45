"""The guard kernel (checking/triton/guard_pass.py) takes each input's words_checksum
(checking/checksum.py), as the torch version defines it, and counts the canary; a change of one
bit anywhere in an input changes its checksum."""

import pytest
import torch

from pytest_gemmcheck.checking.checksum import word_view, words_checksum

fused_check = pytest.importorskip("test_fused_check").fused_check  # loads it under the interpreter
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def guard_row(inputs, block=None, canary=0, guard=0, after=0):
    from pytest_gemmcheck.checking.triton.guard_pass import RESULT_WIDTH, queue_guards

    row = torch.zeros(RESULT_WIDTH, dtype=torch.int64, device=DEVICE)
    queue_guards([word_view(t) for t in inputs], row if block is None else block, guard, after, canary, row)
    return row.tolist()


INPUTS = {
    "fp8 of a size no multiple of 4": lambda: torch.randn(37, 13, device=DEVICE).to(torch.float8_e4m3fn),
    "fp8 in 32-bit words": lambda: torch.randn(64, 32, device=DEVICE).to(torch.float8_e4m3fn),
    "bf16, odd": lambda: torch.randn(3, 5, device=DEVICE).to(torch.bfloat16),
    "fp32 scales": lambda: torch.rand(4099, device=DEVICE),
    "bf16 in whole blocks of words": lambda: torch.randn(64, 64, device=DEVICE).to(torch.bfloat16),
}


def test_the_kernel_takes_the_torch_definition(fused_anywhere):
    tensors = [make() for make in INPUTS.values()]
    for four in (tensors[:4], tensors[-4:]):  # four inputs at most per launch
        row = guard_row(four)
        assert row[2:6] == [words_checksum(word_view(t)) for t in four]
        assert row[:2] == [0, 0]


@pytest.mark.parametrize("name", INPUTS)
def test_one_changed_bit_changes_the_checksum(fused_anywhere, name):
    tensor = INPUTS[name]()
    before = guard_row([tensor])[2]
    for place in (0, tensor.numel() // 2, tensor.numel() - 1):
        changed = tensor.clone()
        changed.view(-1).view(
            torch.uint8 if changed.element_size() == 1 else torch.int16 if changed.element_size() == 2 else torch.int32
        )[place] ^= 1
        assert guard_row([changed])[2] != before
        assert words_checksum(word_view(changed)) != before


def test_the_canary_is_counted_on_both_sides(fused_anywhere):
    from pytest_gemmcheck.launch.guards import GUARD_ELEMENTS, GuardedBuffer

    buffer = GuardedBuffer(8, 8, torch.bfloat16, torch.device(DEVICE))
    buffer.bits[3] = 0
    buffer.bits[buffer.after_offset + 10 : buffer.after_offset + 12] = 0
    row = guard_row([], buffer.bits, buffer.canary, GUARD_ELEMENTS, buffer.after_offset)
    assert row[:2] == [1, 2]


def test_words_a_block_apart_swapped_change_the_checksum(fused_anywhere):
    """Words WORDS_LANES apart share a weight; their keys still tell their places apart."""
    from pytest_gemmcheck.checking.checksum import WORDS_LANES

    tensor = torch.arange(3 * WORDS_LANES, dtype=torch.int32, device=DEVICE)
    swapped = tensor.clone()
    swapped[[5, 5 + WORDS_LANES]] = tensor[[5 + WORDS_LANES, 5]]
    assert guard_row([swapped])[2] != guard_row([tensor])[2]
    assert words_checksum(word_view(swapped)) == guard_row([swapped])[2]
