"""The guards of a launch (:mod:`pytest_gemmcheck.launch.guards`) as one Triton kernel: each
input's checksum (:func:`pytest_gemmcheck.checking.checksum.words_checksum`, compared on the
host with that of its pristine copy), and how many elements of the canary around ``out``
changed, into one small int64 vector. It reads each input once at memory speed (its pristine
copy is read only when the checksums differ, to count and restore) and the guard regions once;
with torch ops the same takes two kernels per tensor, a read of each copy and a temporary as
large as each comparison. :func:`queue_watch` adds the output's checksum to the same kernel: a
launch's whole per-launch work as one kernel, which a CUDA graph of one node replays.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .. import checksum
from ..checksum import word_view
from .kernels import INTERPRETED, _mix32
from .launch import launch
from .plan import main_plan
from .repeat import checksum_tasks, pass_config
from .target import PROGRAM_WARPS, target_of

_BLOCK = checksum.WORDS_LANES  # words per program and step (4 KB of 32-bit words): a lane's weight is fixed
_PROGRAMS_PER_SM = 8  # in all, shared among the slots (each input, and the guard regions)
SLOTS = 5  # four inputs and the guard regions
# result[0], result[1]: canary elements changed before and after out; result[2 + i]: input i's checksum
RESULT_WIDTH = 2 + SLOTS - 1
# checksum.words_checksum's keys, as a compiled kernel may read a global; a block's first key
# is its index times _BLOCK_KEY (modulo 2**32)
_WORDS_KEY: tl.constexpr = tl.constexpr(checksum.WORDS_KEY)
_WORDS_SEED: tl.constexpr = tl.constexpr(checksum.WORDS_SEED)
_BLOCK_KEY: tl.constexpr = tl.constexpr(checksum.WORDS_KEY * checksum.WORDS_LANES & 0xFFFFFFFF)


@triton.jit
def _unsigned_word(raw, BITS: tl.constexpr):
    if BITS == 8:
        return raw.to(tl.uint8, bitcast=True).to(tl.uint32)
    elif BITS == 16:
        return raw.to(tl.uint16, bitcast=True).to(tl.uint32)
    else:
        return raw.to(tl.uint32, bitcast=True)


@triton.jit
def _weighed(word, lane_key, block, weight):
    """Each word of block ``block`` mixed with its place's key and weighed, in 64 bits."""
    return _mix32(word ^ (lane_key + block.to(tl.uint32) * _BLOCK_KEY)).to(tl.uint64) * weight


@triton.jit
def _words_checksum(live, numel, out, index, programs, BITS: tl.constexpr, BLOCK: tl.constexpr):
    """checksum.words_checksum of the words [0, numel) of ``live``, its share of them added into
    ``out``. Its blocks start at multiples of BLOCK (= WORDS_LANES): each lane's weight and key
    are worked out once, and a block adds its first key to the keys; whole blocks are read
    unmasked, the last partial one masked (the per-word hash is what bounds this kernel)."""
    lanes = tl.arange(0, BLOCK)
    weight = (_mix32(lanes.to(tl.uint32) ^ _WORDS_SEED) | 1).to(tl.uint64)
    lane_key = lanes.to(tl.uint32) * _WORDS_KEY
    acc = tl.full([BLOCK], 0, tl.uint64)
    block = index  # block indices (numel // BLOCK < 2**31 for any tensor a GPU holds), offsets in 64 bits
    whole = numel // BLOCK
    while block < whole:  # not range(): see kernels._LOOPS
        word = _unsigned_word(tl.load(live + (block.to(tl.int64) * BLOCK + lanes)), BITS)
        acc += _weighed(word, lane_key, block, weight)
        block += programs
    if block.to(tl.int64) * BLOCK < numel:  # the program whose turn is the partial block
        offsets = block.to(tl.int64) * BLOCK + lanes
        inside = offsets < numel
        word = _unsigned_word(tl.load(live + offsets, mask=inside, other=0), BITS)
        acc += tl.where(inside, _weighed(word, lane_key, block, weight), 0)
    if numel > 0:
        tl.atomic_add(out, tl.sum(acc, axis=0).to(tl.int64, bitcast=True))  # sums modulo 2**64, in any order


@triton.jit
def _guard_slots(
    pid,
    a_live,
    a_numel,
    b_live,
    b_numel,
    c_live,
    c_numel,
    d_live,
    d_numel,
    block,
    guard_numel,
    after_offset,
    canary,
    result,
    end_a,
    end_b,
    end_c,
    end_d,
    end_guards,
    A_BITS: tl.constexpr,
    B_BITS: tl.constexpr,
    C_BITS: tl.constexpr,
    D_BITS: tl.constexpr,
    BLOCK: tl.constexpr,
):
    """Programs [0, end_a) checksum input a into ``result[2]``, [end_a, end_b) input b into
    ``result[3]``, and so on; programs [end_d, end_guards) count the canary into ``result[0:2]``.
    Each slot has programs in proportion to the words it reads, so that all finish together."""
    if pid < end_a:
        _words_checksum(a_live, a_numel, result + 2, pid, end_a, A_BITS, BLOCK)
    elif pid < end_b:
        _words_checksum(b_live, b_numel, result + 3, pid - end_a, end_b - end_a, B_BITS, BLOCK)
    elif pid < end_c:
        _words_checksum(c_live, c_numel, result + 4, pid - end_b, end_c - end_b, C_BITS, BLOCK)
    elif pid < end_d:
        _words_checksum(d_live, d_numel, result + 5, pid - end_c, end_d - end_c, D_BITS, BLOCK)
    else:
        index = pid - end_d
        programs = end_guards - end_d
        before = tl.full([BLOCK], 0, tl.int64)
        after = tl.full([BLOCK], 0, tl.int64)
        start = index * BLOCK
        while start < 2 * guard_numel:  # the two regions end to end: [0, G) before out, [G, 2G) after it
            offsets = start + tl.arange(0, BLOCK)
            inside = offsets < 2 * guard_numel
            first = offsets < guard_numel
            where = tl.where(first, offsets, offsets - guard_numel + after_offset).to(tl.int64)
            bits = tl.load(block + where, mask=inside, other=canary)
            changed = (bits != canary) & inside
            before += (changed & first).to(tl.int64)
            after += (changed & (offsets >= guard_numel)).to(tl.int64)
            start += programs * BLOCK
        before_count = tl.sum(before, axis=0)
        after_count = tl.sum(after, axis=0)
        if before_count != 0:
            tl.atomic_add(result, before_count)
        if after_count != 0:
            tl.atomic_add(result + 1, after_count)


# sizes and program ranges change from case to case: a specialisation on them would compile the
# kernel again inside a CUDA graph's capture
@triton.jit(
    do_not_specialize=[
        "a_numel",
        "b_numel",
        "c_numel",
        "d_numel",
        "guard_numel",
        "after_offset",
        "canary",
        "end_a",
        "end_b",
        "end_c",
        "end_d",
    ]
)
def _guard_kernel(
    a_live,
    a_numel,
    b_live,
    b_numel,
    c_live,
    c_numel,
    d_live,
    d_numel,
    block,
    guard_numel,
    after_offset,
    canary,
    result,
    end_a,
    end_b,
    end_c,
    end_d,
    A_BITS: tl.constexpr,
    B_BITS: tl.constexpr,
    C_BITS: tl.constexpr,
    D_BITS: tl.constexpr,
    BLOCK: tl.constexpr,
):
    """:func:`_guard_slots` over every program."""
    _guard_slots(
        tl.program_id(0),
        a_live,
        a_numel,
        b_live,
        b_numel,
        c_live,
        c_numel,
        d_live,
        d_numel,
        block,
        guard_numel,
        after_offset,
        canary,
        result,
        end_a,
        end_b,
        end_c,
        end_d,
        tl.num_programs(0),
        A_BITS,
        B_BITS,
        C_BITS,
        D_BITS,
        BLOCK,
    )


@triton.jit(
    do_not_specialize=[
        "a_numel",
        "b_numel",
        "c_numel",
        "d_numel",
        "guard_numel",
        "after_offset",
        "canary",
        "end_a",
        "end_b",
        "end_c",
        "end_d",
        "end_guards",
        "M",
        "num_tasks",
        "col_chunks",
        "task_blocks",
        "checksum_at",
    ]
)
def _watch_kernel(
    a_live,
    a_numel,
    b_live,
    b_numel,
    c_live,
    c_numel,
    d_live,
    d_numel,
    block,
    guard_numel,
    after_offset,
    canary,
    result,
    end_a,
    end_b,
    end_c,
    end_d,
    end_guards,
    out_ptr,
    M,
    N,
    stride_out_m,
    stride_out_n,
    num_tasks,
    col_chunks,
    task_blocks,
    checksum_at,
    A_BITS: tl.constexpr,
    B_BITS: tl.constexpr,
    C_BITS: tl.constexpr,
    D_BITS: tl.constexpr,
    BLOCK: tl.constexpr,
    OUT_BITS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    VEC: tl.constexpr,
    EVEN: tl.constexpr,
):
    """:func:`_guard_slots` on programs [0, end_guards), and on the programs after them the
    checksum of ``out`` (repeat.checksum_tasks) added into ``result[checksum_at]``: a launch's
    guards and its output's checksum in one kernel, into a row zeroed before."""
    pid = tl.program_id(0)
    if pid < end_guards:
        _guard_slots(
            pid,
            a_live,
            a_numel,
            b_live,
            b_numel,
            c_live,
            c_numel,
            d_live,
            d_numel,
            block,
            guard_numel,
            after_offset,
            canary,
            result,
            end_a,
            end_b,
            end_c,
            end_d,
            end_guards,
            A_BITS,
            B_BITS,
            C_BITS,
            D_BITS,
            BLOCK,
        )
    else:
        total = checksum_tasks(
            out_ptr,
            out_ptr,
            M,
            N,
            stride_out_m,
            stride_out_n,
            stride_out_m,
            stride_out_n,
            num_tasks,
            col_chunks,
            task_blocks,
            pid - end_guards,
            tl.num_programs(0) - end_guards,
            False,
            OUT_BITS,
            BLOCK_M,
            BLOCK_N,
            VEC,
            EVEN,
        )
        tl.atomic_add(result + checksum_at, total.to(tl.int64, bitcast=True))  # modulo 2**64, in any order


def _guard_arguments(
    inputs: list[torch.Tensor],
    block: torch.Tensor,
    guard_numel: int,
    after_offset: int,
    canary: int,
    result: torch.Tensor,
    total: int,
):
    """The guard slots' arguments (each input and its size, the canary's region and the
    result), their programs' ends (``total`` programs shared in proportion to the words each
    reads, each slot at least one) and the inputs' bits."""
    if len(inputs) > SLOTS - 1:
        raise ValueError(f"at most {SLOTS - 1} inputs are guarded, got {len(inputs)}")
    arguments, bits = [], []
    for index in range(SLOTS - 1):
        if index < len(inputs):
            words = inputs[index]
            arguments += [words, words.numel()]
            bits.append(8 * words.element_size())
        else:
            # nothing to read, but a pointer of 32-bit words, as a compiled kernel's types must agree
            arguments += [result.view(torch.int32), 0]
            bits.append(32)
    sizes = [words.numel() for words in inputs] + [0] * (SLOTS - 1 - len(inputs)) + [2 * guard_numel]
    blocks = [-(-size // _BLOCK) for size in sizes]
    counts = [min(b, max(1, round(total * size / max(1, sum(sizes))))) if b else 0 for b, size in zip(blocks, sizes)]
    counts[-1] = max(1, counts[-1])  # the canary's programs also run when the regions are empty
    ends = [sum(counts[: i + 1]) for i in range(SLOTS)]
    return [*arguments, block, guard_numel, after_offset, canary, result], ends, bits


def _programs(device: torch.device) -> int:
    target = target_of(device)
    return SLOTS if target.interpreted else max(SLOTS, _PROGRAMS_PER_SM * target.multiprocessors)


def queue_watch(
    inputs: list[torch.Tensor],
    block: torch.Tensor,
    guard_numel: int,
    after_offset: int,
    canary: int,
    out: torch.Tensor,
    result: torch.Tensor,
    checksum_at: int,
) -> None:
    """:func:`queue_guards`' counts and checksums, and out's checksum.checksum at
    ``result[checksum_at]``, in one kernel on the current stream, added into ``result`` (int64,
    zeroed by the caller beforehand: a launch's whole work, with no other op beside it)."""
    plan = main_plan(out.shape[0], out.shape[1], out.element_size(), pass_config(out), out.device)
    arguments, ends, bits = _guard_arguments(
        inputs, block, guard_numel, after_offset, canary, result, _programs(block.device)
    )
    launch(
        _watch_kernel,
        ends[-1] + plan.programs,
        (
            *arguments,
            *ends,
            out,
            out.shape[0],
            out.shape[1],
            *out.stride(),
            plan.num_tasks,
            plan.col_chunks,
            plan.task_blocks,
            checksum_at,
        ),
        dict(
            A_BITS=bits[0],
            B_BITS=bits[1],
            C_BITS=bits[2],
            D_BITS=bits[3],
            BLOCK=_BLOCK,
            OUT_BITS=8 * out.element_size(),
            BLOCK_M=plan.block_m,
            BLOCK_N=plan.block_n,
            VEC=plan.vec,
            EVEN=plan.even,
        ),
        plan.num_warps,
        interpreted=INTERPRETED,
    )


def queue_guards(
    inputs: list[torch.Tensor],
    block: torch.Tensor,
    guard_numel: int,
    after_offset: int,
    canary: int,
    result: torch.Tensor,
) -> None:
    """Into ``result`` (int64, length RESULT_WIDTH), on the current stream and not waited for:
    elements of ``block`` (an integer view) in ``[0, guard_numel)`` and ``[after_offset,
    after_offset + guard_numel)`` that differ from ``canary``, then the words_checksum of each of
    the (at most four) ``inputs`` (each as checksum.word_view gives it)."""
    result.zero_()
    arguments, ends, bits = _guard_arguments(
        inputs, block, guard_numel, after_offset, canary, result, _programs(block.device)
    )
    launch(
        _guard_kernel,
        ends[-1],
        (*arguments, *ends[:-1]),
        dict(A_BITS=bits[0], B_BITS=bits[1], C_BITS=bits[2], D_BITS=bits[3], BLOCK=_BLOCK),
        PROGRAM_WARPS,
        interpreted=INTERPRETED,
    )


__all__ = ["queue_guards", "queue_watch", "RESULT_WIDTH", "word_view"]
