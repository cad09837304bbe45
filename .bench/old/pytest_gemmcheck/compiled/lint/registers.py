"""One wave's register file: SGPRs, VGPRs and AGPRs as values of :mod:`.values`, exec and SCC,
which scalars may differ between waves, what decided branches said of unknown scalars, unknown
lane masks as functions of a compare; reading and writing operands. The instruction semantics
over it are :mod:`.semantics`."""

from __future__ import annotations

import functools

import numpy as np

from .operands import EXEC_LO, MASK32, Const, Reg, decode
from .values import MASK64, Affine, Lanes, bound_base, join_lanes, select_lanes, shifted_value, value_class

_EXEC = (EXEC_LO, EXEC_LO + 1)


@functools.lru_cache(maxsize=4096)
def _mask_lanes(mask: int, width: int) -> np.ndarray:
    return np.array([(mask >> lane) & 1 for lane in range(width)], dtype=bool)


class RegisterFile:
    """Registers, exec mask and SCC of one wave, and what is known of them."""

    def __init__(self, width: int):
        self.width = width
        self.sgpr: dict[int, int | Affine | None] = {}
        self.vgpr: dict[int, Lanes] = {}  # 'v' registers
        self.agpr: dict[int, Lanes] = {}  # 'a' registers
        self.scc: bool | None = None
        # SGPRs (and SCC) whose value may differ between the waves of a workgroup at the same point
        # of the program: derived from lanes (readfirstlane, a vector compare) or from an exec that
        # is not a full wave's. Every other scalar comes from what all waves share (kernel
        # arguments, workgroup ids, constants).
        self.nonuniform: set[int] = set()
        self.scc_nonuniform = False
        # VGPRs whose every lane holds the same value in every wave at the same point: computed
        # from uniform scalars and constants only (a loop bound moved to a VGPR for a 64-bit
        # compare). A vector compare of such values is a uniform condition.
        self.uniform_v: set[int] = set()
        # (kind, index) of VGPRs and AGPRs whose every lane holds the same value in every wave
        # (lanes may differ from each other): a lane id below the wave size, what every wave read
        # from the same LDS addresses, moved between lanes alike. A compare of such values is a
        # lane mask the same in every wave, a uniform exec or condition. uniform_v implies it
        self.same_v: set[tuple[str, int]] = set()
        # (kind, index) -> exec: the same in every wave in the lanes of that exec only (written
        # under it, the other lanes keeping values that are not)
        self.same_active: dict[tuple[str, int], tuple] = {}
        # the VGPR holding the work-item ids as they arrived (v0), while it does, and which of its
        # bits are the same in every wave lane by lane (the lane's bits, in a 1-D workgroup)
        self.lane_ids: int | None = None
        self.lane_bits = 0
        # names of unknown values (:mod:`.value_names`): two with one name are one value, in every
        # wave; SGPRs and SCC, VGPRs (all lanes), SGPRs spilled into a VGPR's lane
        self.names: dict[int, tuple] = {}
        self.scc_name: tuple | None = None
        self.vnames: dict[int, tuple] = {}
        self.lane_names: dict[tuple[int, int], tuple] = {}
        self.kernarg: int | None = None  # the SGPR of the kernel argument segment's pointer at entry
        # VGPR -> lanes that hold the same value in every wave (each lane its own value): an SGPR
        # spilled by ``v_writelane`` into a lane of a VGPR, to be read back by ``v_readlane``
        self.uniform_lanes: dict[int, frozenset[int]] = {}
        self.assumed: set[int] = set()  # SGPRs whose value a decided branch gave them, unwritten since
        self.unequal: dict[int, frozenset[int | Affine]] = {}  # SGPRs a decided branch says differ from these
        # SGPRs a decided branch bounds: index -> {comparable class: (("lt", v) tightest, ("ge", v) tightest)}
        self.bounds: dict[int, dict] = {}
        # unknown 64-bit lane masks as bitwise functions of one vector compare's unknown result X:
        # pair index -> (the compare's index, P, Q), the mask being (P & X) | (Q & ~X). LLVM's
        # if/else (and_saveexec, xor, andn2_saveexec, or) then gives exec back as it was
        self.masks: dict[int, tuple[int, int, int]] = {}
        # VGPRs last written under such an unknown exec: index -> (exec's mask, the value written).
        # Its lanes may be active or not, so the register holds join(old, new); but in the lanes
        # active under that same exec it holds the value written, which is what an LDS address
        # computed and used inside an ``s_and_saveexec`` region needs
        self.active_v: dict[int, tuple[tuple[int, int, int], Lanes]] = {}

    def copy(self):
        """An independent copy (Lanes are never changed in place, so the tables are shallow)."""
        other = type(self)(self.width)
        other.sgpr, other.vgpr, other.agpr, other.scc = dict(self.sgpr), dict(self.vgpr), dict(self.agpr), self.scc
        other.nonuniform, other.scc_nonuniform = set(self.nonuniform), self.scc_nonuniform
        other.uniform_v = set(self.uniform_v)
        other.uniform_lanes = dict(self.uniform_lanes)
        other.same_v = set(self.same_v)
        other.same_active = dict(self.same_active)
        other.lane_ids, other.lane_bits = self.lane_ids, self.lane_bits
        other.names, other.scc_name, other.kernarg = dict(self.names), self.scc_name, self.kernarg
        other.vnames, other.lane_names = dict(self.vnames), dict(self.lane_names)
        other.assumed = set(self.assumed)
        other.unequal = dict(self.unequal)
        other.bounds = {i: dict(b) for i, b in self.bounds.items()}
        other.masks = dict(self.masks)
        other.active_v = dict(self.active_v)
        return other

    def uniform_key(self, live) -> tuple:
        """The values every wave at the same dynamic point shares, of the SGPRs ``live(i)`` says
        the program may still read: waves with equal keys take a branch on a uniform condition
        the same way (one that has lost a dead register's value to a join is no different)."""
        return tuple(
            sorted(
                (i, v)
                for i, v in self.sgpr.items()
                if v is not None and i not in self.nonuniform and live(i) and i not in _EXEC
            )
        ), self.scc

    def key(self) -> tuple:
        """A hashable form of every register value: equal keys, equal states."""
        sgprs = tuple(sorted((i, v) for i, v in self.sgpr.items() if v is not None))
        vgprs = tuple(sorted((i, v.key()) for i, v in self.vgpr.items() if v.known.any() or v.has_affine))
        agprs = tuple(sorted((i, v.key()) for i, v in self.agpr.items() if v.known.any() or v.has_affine))
        return (
            sgprs,
            vgprs,
            agprs,
            self.scc,
            frozenset(self.nonuniform),
            self.scc_nonuniform,
            frozenset(self.assumed),
            frozenset(self.uniform_v),
            tuple(sorted((i, tuple(sorted(lanes))) for i, lanes in self.uniform_lanes.items())),
            frozenset(self.same_v),
            tuple(sorted(self.same_active.items())),
            self.lane_ids,
            tuple(sorted(self.names.items())),
            self.scc_name,
            tuple(sorted(self.vnames.items())),
            tuple(sorted(self.lane_names.items())),
            tuple(sorted((i, tuple(sorted(v, key=repr))) for i, v in self.unequal.items())),
            tuple(sorted((i, tuple(sorted(b.items(), key=repr))) for i, b in self.bounds.items())),
            tuple(sorted(self.masks.items())),
            tuple(sorted((i, mask, v.key()) for i, (mask, v) in self.active_v.items())),
        )

    # ---- what a decided branch says --------------------------------------------------------
    def assume_equal(self, a: str, b: str) -> None:
        """On a path where the scalars ``a`` and ``b`` are known to be equal (a decided
        ``s_cmp_eq`` / ``s_cmp_lg``): an unknown register of the two takes the other's value."""
        left, right = self.read(a), self.read(b)
        for unknown, other, text in ((left, right, a), (right, left, b)):
            op = decode(text)
            if (
                isinstance(op, Reg)
                and not unknown.known[0]
                and not unknown.has_affine
                and (other.known[0] or other.has_affine)
            ):
                self.write(text, other)
                if op.kind == "s" and op.index not in self.nonuniform:
                    self.assumed.add(op.index)
                return

    def assume_unequal(self, a: str, b: str) -> None:
        """On a path where the scalars ``a`` and ``b`` differ: remember it of an unknown uniform
        register compared with a constant (the other waves must not learn it equal)."""
        left, right = self.read(a), self.read(b)
        for unknown, other, text in ((left, right, a), (right, left, b)):
            op = decode(text)
            if (
                isinstance(op, Reg)
                and op.kind == "s"
                and op.index not in self.nonuniform
                and not unknown.known[0]
                and not unknown.has_affine
                and (other.known[0] or other.has_affine)
            ):
                value = (
                    int(other.values[0])
                    if other.known[0]
                    else Affine(int(other.values[0]) & MASK32, int(other.step[0]), other.symbol, other.fuzz)
                )
                self.unequal[op.index] = self.unequal.get(op.index, frozenset()) | {value}
                return

    def assume_below(self, a: str, b: str, offset: int, holds: bool, exact: bool = False) -> None:
        """On a path where ``a < b + offset`` holds (or not), unsigned: bound an unknown uniform
        register of the two by the other side's value (a loop's trip count by its counter)."""
        left, right = self.read(a), self.read(b)
        for unknown, other, text, mine in ((left, right, a, True), (right, left, b, False)):
            op = decode(text)
            if not (
                isinstance(op, Reg)
                and op.kind == "s"
                and op.index not in self.nonuniform
                and not unknown.known[0]
                and not unknown.has_affine
                and (other.known[0] or other.has_affine)
            ):
                continue
            # r < v + k  |  r >= v + k   (r on the left);   v < r + k  <=>  r >= v - k + 1
            shift = offset if mine else 1 - offset
            bound = shifted_value(other, shift)
            kind = ("lt" if holds else "ge") if mine else ("ge" if holds else "lt")
            if exact and kind == "lt" and bound == 1:
                # below 1: the register is 0 (a loop that runs no iteration: its trip count).
                # Like an equality, only where that does not split a loop's iterations by value
                self.write(text, Lanes.constant(0, 1))
                self.assumed.add(op.index)
                return
            classes = self.bounds.setdefault(op.index, {})
            key = (kind, value_class(bound))
            old = classes.get(key)
            if old is None or (
                bound_base(bound) < bound_base(old) if kind == "lt" else bound_base(bound) > bound_base(old)
            ):
                classes[key] = bound
            return

    # ---- reading ----------------------------------------------------------------------------
    def sgpr_value(self, index: int) -> int | None:
        value = self.sgpr.get(index)
        return value if isinstance(value, int) else None

    def sgpr64(self, index: int) -> int | None:
        lo, hi = self.sgpr_value(index), self.sgpr_value(index + 1)
        if lo is None or hi is None:
            return None
        return lo | (hi << 32)

    @property
    def exec_mask(self) -> int | None:
        return self.sgpr64(EXEC_LO)

    def active(self) -> np.ndarray:
        """Lanes that may be active: every lane when exec is unknown."""
        mask = self.exec_mask
        if mask is None:
            return np.ones(self.width, dtype=bool)
        return _mask_lanes(mask, self.width).copy()

    def read(self, text: str, *, part: int = 0) -> Lanes:
        """A 32-bit source operand (``part`` selects a dword of a range) as lanes or a scalar."""
        op = decode(text)
        if isinstance(op, Const):
            return Lanes.constant(op.value >> (32 * part), 1)
        if isinstance(op, Reg):
            if op.kind == "s":
                value = self.sgpr.get(op.index + part)
                if isinstance(value, Affine):
                    return value.lanes()
                return Lanes.constant(value, 1) if value is not None else Lanes.unknown(1)
            if op.kind == "v" and self.active_v:
                written = self.active_v.get(op.index + part)
                if written is not None and written[0] == self.exec_symbol():
                    return written[1]
            table = self.vgpr if op.kind == "v" else self.agpr
            return table.get(op.index + part) or Lanes.unknown(self.width)
        return Lanes.unknown(1)

    def exec_symbol(self) -> tuple[int, int, int] | None:
        """exec as a mask of one vector compare's unknown result (see ``masks``), or None."""
        return self.masks.get(EXEC_LO) if self.masks and self.exec_mask is None else None

    def mask64(self, text: str) -> tuple[int | None, int, int] | None:
        """A 64-bit scalar operand as (symbol, P, Q) (see ``masks``; symbol None: the constant
        P == Q), or None when it is neither known nor such a mask."""
        value = self.read_scalar64(text)
        if value is not None:
            return None, value, value
        op = decode(text)
        if (
            isinstance(op, Reg)
            and op.kind == "s"
            and op.count == 2
            and self.sgpr.get(op.index) is None
            and self.sgpr.get(op.index + 1) is None
        ):
            return self.masks.get(op.index)
        return None

    def write_mask64(self, index: int, mask: tuple[int | None, int, int] | None) -> None:
        if mask is None or mask[1] == mask[2]:
            self.write_sgpr64(index, None if mask is None else mask[1])
            return
        self.write_sgpr64(index, None)
        self.masks[index] = mask

    def read_scalar64(self, text: str) -> int | None:
        op = decode(text)
        if isinstance(op, Const):
            value = op.value
            # a 32-bit literal used as a 64-bit operand is sign-extended
            if value < (1 << 32) and value & 0x80000000:
                value |= 0xFFFFFFFF00000000
            return value
        if isinstance(op, Reg) and op.kind == "s":
            return self.sgpr64(op.index)
        return None

    # ---- writing ----------------------------------------------------------------------------
    def write_sgpr(self, index: int, value: int | Affine | None) -> None:
        if self.names:
            self.names.pop(index, None)
        if self.masks:
            self.masks.pop(index, None)
            self.masks.pop(index - 1, None)
        self.assumed.discard(index)
        self.unequal.pop(index, None)
        self.bounds.pop(index, None)
        self.sgpr[index] = value if value is None or isinstance(value, Affine) else int(value) & MASK32

    def write_sgpr64(self, index: int, value: int | None) -> None:
        if value is None:
            self.write_sgpr(index, None)
            self.write_sgpr(index + 1, None)
        else:
            self.write_sgpr(index, value & MASK32)
            self.write_sgpr(index + 1, (value >> 32) & MASK32)

    def write(self, text: str, value: Lanes, *, part: int = 0) -> None:
        """Write one dword of a destination; vector writes touch active lanes only."""
        op = decode(text)
        if not isinstance(op, Reg):
            return
        index = op.index + part
        if op.kind == "s":
            if value.known[0] or value.step is None or not value.affine[0]:
                self.write_sgpr(index, value.scalar())
            else:
                self.write_sgpr(
                    index, Affine(int(value.values[0]) & MASK32, int(value.step[0]), value.symbol, value.fuzz)
                )
            return
        table = self.vgpr if op.kind == "v" else self.agpr
        new = value.broadcast(self.width)
        old = table.get(index) or Lanes.unknown(self.width)
        if op.kind == "v" and self.active_v:
            self.active_v.pop(index, None)
        if self.exec_mask is None:
            # exec unknown: a lane keeps a value only if old and new agree on it
            table[index] = join_lanes(old, new)
            symbol = self.exec_symbol()
            if op.kind == "v" and symbol is not None:
                self.active_v[index] = (symbol, new)
            return
        table[index] = select_lanes(self.active(), new, old)

    def clobber(self, text: str) -> None:
        """Mark every dword of a destination operand unknown."""
        op = decode(text)
        if not isinstance(op, Reg):
            return
        whole = op.kind != "s" and self.exec_mask in (None, MASK64)
        for part in range(op.count):
            if op.kind == "s":
                self.write_sgpr(op.index + part, None)
            elif whole:  # every lane unknown: an absent register reads as unknown
                (self.vgpr if op.kind == "v" else self.agpr).pop(op.index + part, None)
                if op.kind == "v":
                    self.active_v.pop(op.index + part, None)
            else:
                self.write(text, Lanes.unknown(self.width), part=part)

    # ---- unknown lane masks -----------------------------------------------------------------
    def forget_unknown(self, symbol: int) -> None:
        """The masks of the unknown named ``symbol`` (a compare or an ``and``), and the values
        written under them: its instruction ran again, so they are of another X."""
        self.masks = {i: m for i, m in self.masks.items() if m[0] != symbol}
        self.same_active = {i: m for i, m in self.same_active.items() if m[0] != symbol}
        self.active_v = {i: w for i, w in self.active_v.items() if w[0][0] != symbol}
