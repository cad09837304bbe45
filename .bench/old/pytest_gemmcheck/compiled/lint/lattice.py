"""The dataflow engine's lattice: how two states join (what differs becomes unknown, every
behaviour of either kept), how registers that grew by one step twice fold into values affine in
a loop's iteration count, and when one state covers another, so that it need not be explored
again.
"""

from __future__ import annotations

import numpy as np

from .operands import MASK32
from .phase_states import PERIOD, STATES_PER_POINT, UNKNOWN_COUNT, Group, WaveAbs, add_to_queue
from .semantics import WaveState
from .values import Affine, Lanes, join_lanes


# ---- joins ------------------------------------------------------------------------------------
def join_waves(a: WaveAbs, b: WaveAbs) -> WaveAbs:
    out = a.copy()
    out.regs = join_registers(a.regs, b.regs)
    out.phase_writes = a.phase_writes | b.phase_writes
    for mine, theirs in ((out.vm, b.vm), (out.ds, b.ds)):
        for entry, younger in theirs.items():
            add_to_queue(mine, entry, younger)
    for site in set(a.issued) | set(b.issued):
        if a.issued.get(site, 0) != b.issued.get(site, 0):
            out.issued[site] = UNKNOWN_COUNT
    for site in set(a.passed) | set(b.passed):
        if a.passed.get(site, 0) != b.passed.get(site, 0):
            out.passed[site] = UNKNOWN_COUNT
    return out


def join_groups(a: Group, b: Group) -> Group:
    """Two workgroup states at the same barriers as one: every behaviour of either."""
    waves = [join_waves(x, y) for x, y in zip(a.waves, b.waves)]
    for w, x, y in zip(waves, a.waves, b.waves):
        w.final = x.final | y.final
    line = f"the workgroup states at these barriers were joined after {STATES_PER_POINT} of them"
    memo = tuple(x & y for x, y in zip(a.memo, b.memo))
    return Group(
        waves,
        a.visible | b.visible,
        a.reads | b.reads,
        a.written | b.written,
        b.trace,
        {},
        b.decided,
        (b.merged + (line,))[-3:],
        memo,
    )


def closest(bucket: list[Group], group: Group) -> Group:
    """The state of ``bucket`` whose folded (affine) registers are those of ``group``: joining with
    it keeps them, where joining with any other would lose the loop's iteration count."""

    def folded(g: Group) -> tuple:
        return tuple(
            frozenset((i, v.step, v.symbol) for i, v in w.regs.sgpr.items() if isinstance(v, Affine)) for w in g.waves
        )

    mine = folded(group)
    return next((old for old in reversed(bucket) if folded(old) == mine), bucket[-1])


def join_scalar(a: int | Affine | None, b: int | Affine | None) -> int | Affine | None:
    """Equal values stay; an affine value that covers the other (one of its iterations) stays."""
    if a == b:
        return a
    for cover, other in ((a, b), (b, a)):
        if isinstance(cover, Affine) and cover.fuzz == 0:
            base = (
                other.base
                if isinstance(other, Affine) and (other.step, other.symbol, other.fuzz) == (cover.step, cover.symbol, 0)
                else other
                if isinstance(other, int)
                else None
            )
            if base is not None and _affine_offset(cover.base, cover.step, base) is not None:
                return cover
    return None


def join_registers(a: WaveState, b: WaveState) -> WaveState:
    out = WaveState(a.width)
    for index in set(a.sgpr) & set(b.sgpr):
        value = join_scalar(a.sgpr[index], b.sgpr[index])
        if value is not None:
            out.sgpr[index] = value
    for mine, x, y in ((out.vgpr, a.vgpr, b.vgpr), (out.agpr, a.agpr, b.agpr)):
        for index in set(x) & set(y):
            mine[index] = x[index] if x[index] is y[index] else join_lanes(x[index], y[index])
    out.scc = a.scc if a.scc == b.scc else None
    out.masks = {i: m for i, m in a.masks.items() if b.masks.get(i) == m}
    out.active_v = {
        i: (mask, v)
        for i, (mask, v) in a.active_v.items()
        if i in b.active_v and b.active_v[i][0] == mask and b.active_v[i][1].key() == v.key()
    }
    out.nonuniform = a.nonuniform | b.nonuniform
    out.uniform_v = a.uniform_v & b.uniform_v
    out.uniform_lanes = {
        i: lanes & b.uniform_lanes[i]
        for i, lanes in a.uniform_lanes.items()
        if lanes & b.uniform_lanes.get(i, frozenset())
    }
    out.same_v = a.same_v & b.same_v
    out.same_active = {i: m for i, m in a.same_active.items() if b.same_active.get(i) == m}
    out.names = {i: n for i, n in a.names.items() if b.names.get(i) == n}
    out.scc_name = a.scc_name if a.scc_name == b.scc_name else None
    out.vnames = {i: n for i, n in a.vnames.items() if b.vnames.get(i) == n}
    out.lane_names = {i: n for i, n in a.lane_names.items() if b.lane_names.get(i) == n}
    out.kernarg = a.kernarg
    out.lane_ids = a.lane_ids if a.lane_ids == b.lane_ids else None
    out.lane_bits = a.lane_bits
    out.assumed = {i for i in a.assumed & b.assumed if i in out.sgpr}
    out.scc_nonuniform = a.scc_nonuniform or b.scc_nonuniform
    return out


# ---- folds ------------------------------------------------------------------------------------
def _signed_differences(new: np.ndarray, old: np.ndarray) -> np.ndarray:
    """``new - old`` lane by lane, as signed 32-bit values (the vector form of :func:`_signed32`)."""
    return (new - old + (1 << 31)) % (1 << 32) - (1 << 31)


def _signed32(value: int) -> int:
    value &= MASK32
    return value - (1 << 32) if value & 0x80000000 else value


def alternates(regs: WaveState, first: WaveState, second: WaveState) -> bool:
    """Whether the registers of ``regs`` that did not grow by one step from ``first`` through
    ``second`` are as in ``first`` and some differ from ``second``: a loop over a two-stage ring
    whose stages swap registers (MLA decode's LDS bases and M0). Folded two iterations apart,
    its state closes after two more instead of :data:`PERIOD`; a stage computed from the counter
    (``k mod 3``) alternates nothing, and keeps the period of 12."""
    differs = False
    for index in set(regs.sgpr) | set(first.sgpr) | set(second.sgpr):
        a, b, c = first.sgpr.get(index), second.sgpr.get(index), regs.sgpr.get(index)
        if c is None or (c == a and c == b):  # an unknown value stays unknown folded
            continue
        if isinstance(a, int) and isinstance(b, int) and isinstance(c, int) and _signed32(c - b) == _signed32(b - a):
            continue
        if c != a:
            return False
        differs = True
    for table, firsts, seconds in ((regs.vgpr, first.vgpr, second.vgpr), (regs.agpr, first.agpr, second.agpr)):
        for index in set(table) | set(firsts) | set(seconds):
            a, b, c = firsts.get(index), seconds.get(index), table.get(index)
            keys = [x.key() if x is not None and (x.known.any() or x.has_affine) else None for x in (a, b, c)]
            if keys[2] is None or keys[2] == keys[0] == keys[1]:
                continue
            if keys[2] != keys[0]:
                if a is None or b is None or c is None or c.has_affine or a.has_affine or b.has_affine:
                    return False
                step, previous = _signed_differences(c.values, b.values), _signed_differences(b.values, a.values)
                known = c.known & a.known & b.known
                if not (
                    np.array_equal(c.known, a.known)
                    and np.array_equal(c.known, b.known)
                    and (step == previous)[known].all()
                ):
                    return False
                continue
            differs = True
    return differs


def fold_registers(regs: WaveState, first: WaveState, second: WaveState, symbol: int, period: int = PERIOD) -> bool:
    """Make affine, ``period`` steps apart, the registers of ``regs`` that grew by one step from
    ``first`` to ``second`` to ``regs``; True when one did."""
    changed = False
    for index, value in list(regs.sgpr.items()):
        a, b = first.sgpr.get(index), second.sgpr.get(index)
        if isinstance(value, int) and isinstance(a, int) and isinstance(b, int):
            step = _signed32(value - b)
            if step and step == _signed32(b - a):
                regs.sgpr[index] = Affine(value, period * step, symbol)
                changed = True
    for table, firsts, seconds in ((regs.vgpr, first.vgpr, second.vgpr), (regs.agpr, first.agpr, second.agpr)):
        for index, lanes in list(table.items()):
            a, b = firsts.get(index), seconds.get(index)
            if a is None or b is None or lanes is b or a is b or lanes.has_affine or a.has_affine or b.has_affine:
                continue
            known = lanes.known & a.known & b.known
            step, previous = _signed_differences(lanes.values, b.values), _signed_differences(b.values, a.values)
            grows = known & (step != 0) & (step == previous)
            if not grows.any():
                continue
            table[index] = Lanes(
                lanes.values.copy(), lanes.known & ~grows, np.where(grows, period * step, 0), grows, symbol
            )
            changed = True
    return changed


# ---- covers -----------------------------------------------------------------------------------
def wave_covers(old: WaveAbs, new: WaveAbs) -> bool:
    """Within a phase: whether ``new`` adds nothing to ``old`` (its counts included)."""
    for site in set(old.issued) | set(new.issued):
        if old.issued.get(site, 0) not in (new.issued.get(site, 0), UNKNOWN_COUNT):
            return False
    return _registers_cover(old.regs, new.regs, {})


def wave_subsumes(old: WaveAbs, new: WaveAbs) -> bool:
    """Within a phase, for states of any shape: whether ``new`` adds nothing to ``old``. Every
    load and read ``new`` has in flight ``old`` has too, with no more younger operations (it
    stays in flight at least as long); the rest as :func:`wave_covers`."""
    for mine, theirs in ((old.vm, new.vm), (old.ds, new.ds)):
        if any(mine.get(entry, younger + 1) > younger for entry, younger in theirs.items()):
            return False
    return old.passed == new.passed and old.final == new.final and wave_covers(old, new)


def subsumes(old: Group, new: Group) -> bool:
    """Whether every behaviour of ``new`` is one of ``old``'s (their shapes are equal)."""
    offsets: dict[int, int] = {}
    for a, b in zip(old.waves, new.waves):
        if not _registers_cover(a.regs, b.regs, offsets):
            return False
    return True


def _affine_offset(base_a: int, step: int, base_b: int) -> int | None:
    """The J at which ``base_a + step*J`` equals ``base_b``, when it is a natural number."""
    if step == 0:
        return 0 if base_a == base_b else None
    diff = _signed32(base_b - base_a)
    if diff % step or diff // step < 0:
        return None
    return diff // step


def _embedding(old: Affine, new: Affine) -> tuple | None:
    """How ``new``'s values sit among ``old``'s: (k, m, new symbol) with ``old`` at ``J = k + m J'``
    equal to ``new`` at ``J'``, for naturals k and m; None when they do not all."""
    if old.step == 0:
        return None
    k = _affine_offset(old.base, old.step, new.base)
    if k is None or new.step % old.step or new.step // old.step < 0:
        return None
    m = new.step // old.step
    return k, m, new.symbol if m else 0


def _agree(offsets: dict[int, object], symbol: int, k) -> bool:
    """Whether one symbol of the covering state maps alike for every register that uses it."""
    if k is None:
        return False
    return offsets.setdefault(symbol, k) == k


def _registers_cover(a: WaveState, b: WaveState, offsets: dict[int, int]) -> bool:
    if a.scc is not None and a.scc != b.scc:
        return False
    if not a.uniform_v <= b.uniform_v:  # a wave-uniform vector value is a fact that narrows a state
        return False
    if any(not lanes <= b.uniform_lanes.get(i, frozenset()) for i, lanes in a.uniform_lanes.items()):
        return False
    if not a.same_v <= b.same_v or (a.lane_ids is not None and a.lane_ids != b.lane_ids):
        return False
    if any(b.same_active.get(i) != m and i not in b.same_v for i, m in a.same_active.items()):
        return False
    # two registers with one name take a branch alike: the covering state may tie no more
    if not (
        a.names.items() <= b.names.items()
        and a.vnames.items() <= b.vnames.items()
        and a.lane_names.items() <= b.lane_names.items()
        and a.scc_name in (None, b.scc_name)
    ):
        return False
    # what a decided branch ruled out narrows a state: the covering one may rule out no more
    if any(not values <= b.unequal.get(index, frozenset()) for index, values in a.unequal.items()):
        return False
    if any(not bounds.items() <= b.bounds.get(index, {}).items() for index, bounds in a.bounds.items()):
        return False
    if any(b.masks.get(index) != mask for index, mask in a.masks.items()):
        return False
    for index, (mask, value) in a.active_v.items():
        other = b.active_v.get(index)
        if other is None or other[0] != mask or other[1].key() != value.key():
            return False
    for index, value in a.sgpr.items():
        if value is None:
            continue
        other = b.sgpr.get(index)
        if value == other:
            continue
        if not isinstance(value, Affine):
            return False
        if isinstance(other, Affine):
            if other.fuzz != value.fuzz or not _agree(offsets, value.symbol, _embedding(value, other)):
                return False
        elif not (
            isinstance(other, int)
            and value.fuzz == 0
            and _agree(offsets, value.symbol, _embedding(value, Affine(other, 0, 0)))
        ):
            return False
    for mine, theirs in ((a.vgpr, b.vgpr), (a.agpr, b.agpr)):
        for index, lanes in mine.items():
            other = theirs.get(index)
            if other is lanes:
                continue
            if not (lanes.known.any() or lanes.has_affine):
                continue
            if other is None or not _lanes_cover(lanes, other, offsets):
                return False
    return True


def _lanes_cover(a: Lanes, b: Lanes, offsets: dict[int, object]) -> bool:
    if not (b.known[a.known].all() and (a.values[a.known] == b.values[b.known & a.known]).all()):
        return False
    if not a.has_affine:
        return True
    lanes = a.affine
    if not (b.has_affine and b.fuzz == a.fuzz and b.affine[lanes].all()):
        return False
    step, other_step = a.step[lanes], b.step[lanes]
    diff = _signed_differences(b.values[lanes], a.values[lanes])
    if (diff % step).any() or (other_step % step).any():
        return False
    ks, ms = set((diff // step).tolist()), set((other_step // step).tolist())
    if len(ks) != 1 or len(ms) != 1 or min(ks) < 0 or min(ms) < 0:
        return False
    m = ms.pop()
    return _agree(offsets, a.symbol, (ks.pop(), m, b.symbol if m else 0))
