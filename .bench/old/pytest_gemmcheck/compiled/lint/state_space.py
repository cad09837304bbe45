"""The workgroup states the dataflow engine has seen, by shape and by where each wave is: a new
state is explored unless one seen before subsumes it; along a path where a phase recurs, the
registers that grew by one step fold; past a bound of states they are joined, so that the
analysis ends."""

from __future__ import annotations

import hashlib
import math
import pickle

from .asm import Instruction
from .lattice import alternates, closest, fold_registers, join_groups, join_registers, subsumes
from .phase_states import PERIOD, STATES_PER_PHASE, STATES_PER_POINT, Group, LoopSymbols, Outcome


class StateSpace:
    """The states admitted so far; :meth:`admit` takes a new one in."""

    def __init__(self, code: list[Instruction], outcome: Outcome, symbols: LoopSymbols):
        self.code = code
        self.outcome = outcome
        self.symbols = symbols
        self.exact: set = set()
        self.by_shape: dict[tuple, list[Group]] = {}
        self.by_point: dict[tuple, list[Group]] = {}  # by where each wave is

    def admit(self, group: Group) -> Group | None:
        """``group`` as it is to be explored (folded, widened or joined), or None when a state seen
        before covers it."""
        key = hashlib.blake2b(pickle.dumps(group.key()), digest_size=20).digest()
        if key in self.exact:
            return None
        self.exact.add(key)
        shape = group.shape()
        bucket = self.by_shape.setdefault(shape, [])
        if any(subsumes(old, group) for old in bucket):
            return None
        group = self._fold(group.base_shape(), group)
        if len(bucket) >= STATES_PER_PHASE:
            group = self._widen(closest(bucket, group), group)
        if any(subsumes(old, group) for old in bucket):
            return None
        point = tuple((w.pc, w.ended) for w in group.waves)
        here = self.by_point.setdefault(point, [])
        if len(here) >= STATES_PER_POINT:
            # queues and counts differ too: join whole states, a lattice of finite height
            joined = join_groups(here[-1], group)
            if joined.key() == here[-1].key():
                return None
            group = joined
            bucket = self.by_shape.setdefault(group.shape(), [])
        here.append(group)
        bucket.append(group)
        self.outcome.states += 1
        return group

    def _fold(self, shape: tuple, group: Group) -> Group:
        """Registers that grew by the same step twice through a runtime branch become affine."""
        point = tuple((w.pc, w.ended) for w in group.waves)
        # the times this path reached this point: a shape that recurs only every r-th iteration
        # (a ring of r stages in flight) folds r iterations at a time
        visits = group.history[point] = group.history.get(point, 0) + 1
        seen = group.history.get(shape, ())
        group.history[shape] = (seen + ((tuple(w.regs for w in group.waves), group.decided, visits),))[-2:]
        if len(seen) < 2 or seen[-1][1] == group.decided:
            return group
        (first, _, first_visit), (second, _, second_visit) = seen
        # every path folding here names its iteration count alike, so their states compare
        symbol = self.symbols.at(point)
        folded = [w.copy() for w in group.waves]
        changed = False
        if all(alternates(w.regs, a, b) for w, a, b in zip(group.waves, first, second)):
            period = 2
        else:
            # PERIOD iterations, not PERIOD recurrences of the shape: stage counts dividing PERIOD stay exact
            period = PERIOD // math.gcd(PERIOD, second_visit - first_visit)
        for w, a, b in zip(folded, first, second):
            changed |= fold_registers(w.regs, a, b, symbol, period)
        if changed:
            group.waves = folded
            group.history = {}
        return group

    def _widen(self, previous: Group, group: Group) -> Group:
        waves = [w.copy() for w in group.waves]
        for w, old in zip(waves, previous.waves):
            w.regs = join_registers(old.regs, w.regs)
        line = self.code[waves[0].barrier].line if waves[0].barrier >= 0 else 0
        merged = group.merged + (
            f"the registers of the phase after line {line} were joined after {STATES_PER_PHASE} iterations",
        )
        return Group(
            waves, group.visible, group.reads, group.written, group.trace, {}, group.decided, merged[-3:], group.memo
        )
