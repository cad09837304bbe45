"""The dataflow engine's bounds and abstract states: one wave's state at a point of its program,
a workgroup's at a rendezvous, what a wave did in a phase, what the analysis found; the queues of
operations in flight, and the issue and barrier counts that tell instances apart, kept relative.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field

from .lds_ranges import Ranges
from .semantics import WaveState

PERIOD = 12  # a folded loop's state stands for iterations 12 apart: stage counts 1, 2, 3, 4, 6, 12 stay exact
SHARED_VISITS = 2  # visits of a scalar branch in one phase decided for all waves alike
STATES_PER_BRANCH = 4 * PERIOD  # states of one shape at a branch within a phase before they are joined
# states of any shape at a branch within a phase before each new one is joined into one state of
# that branch, queues and issue counts included: a run of branches on exec masks that each issue a
# load or wait (a guarded gather) would otherwise give one queue shape per combination of them
SHAPES_PER_BRANCH = 4 * STATES_PER_BRANCH
STATES_PER_PHASE = 8 * PERIOD  # states of one recurring phase before its registers are joined
STATES_PER_POINT = 2 * STATES_PER_PHASE  # states at one set of barriers before whole states are joined
MAX_PHASE_STEPS = 2_000_000  # instructions one wave may run in one phase
UNKNOWN_COUNT = -1  # a load's issue count where paths with different counts were joined
# the bytes of a read whose address the model does not know: it may overlap any load, so a load it
# could pair with makes it unchecked; where no load can (counters and barriers retired them all in
# every wave) it is safe whatever its address
ANYWHERE: Ranges = ((0, 1 << 40),)
UNKNOWN_READ = "the LDS address is not known here"
UNKNOWN_WRITE = "the LDS address of the read or of a DS write is not known here"


@dataclass
class WaveAbs:
    """One wave's abstract state at a point of its program."""

    wave: int
    pc: int
    regs: WaveState
    vm: dict[tuple[int, Ranges], int] = field(default_factory=dict)  # (load, bytes) -> fewest younger VM ops
    # (read or DS write, bytes) -> fewest younger DS ops: both retire under lgkmcnt
    ds: dict[tuple[int, Ranges], int] = field(default_factory=dict)
    barrier: int = -1  # the barrier instruction passed last
    ended: bool = False
    # times the wave issued each load, relative to the workgroup's fewest: the same count in two
    # waves is the same load instance (the same iteration's), as every wave runs the same code
    issued: dict[int, int] = field(default_factory=dict)
    # times the wave passed each barrier, relative likewise: two waves at one barrier instruction
    # with different counts are at different iterations of a loop, a phase apart
    passed: dict[int, int] = field(default_factory=dict)
    # a wave that ended: the loads of its last phase, (load, bytes, issue count). It takes part in
    # no later rendezvous, so they stay unordered with everything the other waves do after it.
    final: frozenset = frozenset()
    # the DS writes the wave issued since its last barrier: a read after its own copy of a write
    # means to see the other waves' copies (every wave runs the same code)
    phase_writes: frozenset = frozenset()

    def copy(self) -> "WaveAbs":
        return WaveAbs(
            self.wave,
            self.pc,
            self.regs.copy(),
            dict(self.vm),
            dict(self.ds),
            self.barrier,
            self.ended,
            dict(self.issued),
            dict(self.passed),
            self.final,
            self.phase_writes,
        )

    def shape(self) -> tuple:
        return (
            self.pc,
            self.ended,
            self.barrier,
            frozenset(self.vm.items()),
            frozenset(self.ds.items()),
            self.phase_writes,
            frozenset(self.issued.items()),
            frozenset(self.passed.items()),
            self.final,
        )

    def at_barrier(self) -> tuple[int, int]:
        """The barrier passed last, with how many times (relative): equal for aligned waves."""
        return self.barrier, self.passed.get(self.barrier, 0)

    def key(self) -> tuple:
        return self.shape(), self.regs.key()


@dataclass(frozen=True)
class Visible:
    """A load that wave ``wave`` had in flight when it passed barrier ``barrier``."""

    wave: int
    site: int
    lds: Ranges
    younger: int
    barrier: int
    passed: int = 0  # the wave's count of that barrier (see WaveAbs.passed)
    after_end: int | None = None  # issued in the last phase of a wave that ended: its issue count
    count: int = 0  # the issue count of the wave's latest instance of the load
    # in flight at the wave's barrier before this one too (not issued in the phase that ended here,
    # on any path): a whole barrier phase of the workgroup lies between its issue and what follows
    carried: bool = False


@dataclass
class Group:
    """A workgroup state at a rendezvous, with how it was reached."""

    waves: list[WaveAbs]
    visible: frozenset[Visible]  # loads in flight at some wave's last barrier
    # (wave, read, bytes, (load, issue count) the wave issued before it) still in flight at its last barrier
    reads: frozenset[tuple[int, int, Ranges, frozenset]]
    # (wave, DS write, bytes) unordered with the other waves' later accesses: in flight at the
    # wave's last barrier (no lgkmcnt wait retired it), or issued in the last phase of a wave that ended
    written: frozenset[tuple[int, int, Ranges]] = frozenset()
    trace: tuple[str, ...] = ()
    # shape -> the last two register states along this path; point -> visits
    history: dict = field(default_factory=dict)
    decided: int = 0  # runtime branches decided along the path
    merged: tuple[str, ...] = ()  # where this state joined others (findings from it may over-report)
    # uniform branches decided in the last two phases: (branch, uniform key) -> taken. A wave that
    # reaches one of them later with the same uniform scalars (a wave group a phase behind, at the
    # same iteration) takes it the same way
    memo: tuple[frozenset, frozenset] = (frozenset(), frozenset())

    def shape(self) -> tuple:
        # which branches were remembered taken or not, without the iteration's values: a state of
        # a later iteration is subsumed through its registers as it is without remembered decisions
        return self.base_shape() + (tuple(frozenset((key[0], taken) for key, taken in table) for table in self.memo),)

    def base_shape(self) -> tuple:
        """The shape less the remembered decisions: what recurs from one iteration to the next
        before a loop is folded (the decisions name the iteration's counter values)."""
        return tuple(w.shape() for w in self.waves), self.visible, self.reads, self.written

    def key(self) -> tuple:
        return self.shape(), self.memo, tuple(w.regs.key() for w in self.waves)


@dataclass
class Hazard:
    severity: str  # error, latent, warning
    read: int  # instruction index of the read
    load: int  # of the load
    reader: int
    writer: int
    lds: Ranges
    how: str  # own, visible, concurrent, in-flight
    cover: str  # the wait that would order them
    barriers: str  # the barrier pair involved
    trace: tuple[str, ...]
    merged: tuple[str, ...]


@dataclass
class Unchecked:
    site: int
    waves: set[int]
    why: str
    merged: set[str] = field(default_factory=set)  # approximations of the states it was found in


@dataclass
class Outcome:
    """What the analysis of one kernel found."""

    hazards: list[Hazard] = field(default_factory=list)
    unchecked: dict[tuple[int, str], Unchecked] = field(default_factory=dict)
    # reads whose pairing with another wave's DS write the addresses could not decide, by read:
    # reported, but not as unchecked (see docs/lint.md, "Which way each approximation errs")
    undecided: dict[int, Unchecked] = field(default_factory=dict)
    incomplete: dict[int, str] = field(default_factory=dict)  # line -> instruction not modelled
    finished: bool = True
    states: int = 0
    merged: tuple[str, ...] = ()  # the approximations behind the state being explored

    def flag(self, site: int, wave: int, why: str) -> None:
        item = self.unchecked.setdefault((site, why), Unchecked(site, set(), why))
        item.waves.add(wave)
        item.merged.update(self.merged)

    def unknown_read(self, read: int, reader: int, load_line: int, writer: int) -> None:
        """A read of unknown address that a load still in flight may write: not checked."""
        who = "its own" if reader == writer else f"wave {writer}'s"
        why = f"{UNKNOWN_READ}, and {who} load at line {load_line} may still be in flight: this read was not checked"
        item = self.unchecked.setdefault((read, UNKNOWN_READ), Unchecked(read, set(), why))
        item.waves.add(reader)
        item.merged.update(self.merged)


class NeedDecision(Exception):
    """A uniform branch the phase has not decided yet: the phase is run once per choice."""

    def __init__(self, key: tuple, walk: "Walk | None" = None):
        super().__init__(key)
        self.key = key
        self.walk = walk  # the wave's walk as it stood at the branch: resumed once it is decided


@dataclass
class Walk:
    """One wave's walk through a phase, stopped at a uniform branch not yet decided: the paths
    still to take (the stopped one first, back at its branch), the end states and branch states
    so far, what it recorded and the decisions it read. Resumed under each choice, it does not
    walk again the code before the branch."""

    heap: list
    finals: dict
    seen: dict
    record: PhaseRecord
    read: dict
    steps: int
    order: int

    def resumed(self) -> "Walk":
        """An independent copy to go on from (a walk is resumed once per choice)."""
        heap = [(pc, parked, order, wave.copy(), dict(visits)) for pc, parked, order, wave, visits in self.heap]
        heapq.heapify(heap)
        return Walk(
            heap,
            {end: wave.copy() for end, wave in self.finals.items()},
            {key: list(value) if isinstance(value, list) else value for key, value in self.seen.items()},
            PhaseRecord(
                {key: set(value) for key, value in self.record.reads.items()},
                set(self.record.loads),
                set(self.record.writes),
                dict(self.record.prior),
                set(self.record.uniform),
            ),
            dict(self.read),
            self.steps,
            self.order,
        )


@dataclass
class PhaseRecord:
    """What one wave did in a phase, over all its paths: reads and loads, with their bytes."""

    # -> for each instance of the read, the (load, issue count) pairs of its wave at that point
    reads: dict[tuple[int, Ranges], set[frozenset]] = field(default_factory=dict)
    loads: set[tuple[int, Ranges, int]] = field(default_factory=set)  # (load, bytes, its issue count)
    writes: set[tuple[int, Ranges]] = field(default_factory=set)  # (DS write, bytes)
    # (read, bytes) -> the DS writes its wave issued before it in the phase, on some path
    prior: dict[tuple[int, Ranges], frozenset] = field(default_factory=dict)
    # (read, bytes) of the reads whose data the wave took as the same in every wave (one address
    # in every lane of every wave): checked at the rendezvous against every write that may change
    # those bytes between the waves' reads
    uniform: set[tuple[int, Ranges]] = field(default_factory=set)


class OutOfTime(Exception):
    """The time limit passed in the middle of a phase."""


class LoopSymbols:
    """The unknown iteration counts of folded loops, numbered from 1: one per place where loops
    fold (a phase's point, a branch within a phase), so that every path folding there names its
    iteration count alike and their states compare."""

    def __init__(self):
        self.numbers = itertools.count(1)
        self.by_place: dict[tuple, int] = {}

    def at(self, place: tuple) -> int:
        return self.by_place.setdefault(place, next(self.numbers))


# ---- queues of operations in flight ------------------------------------------------------------
def age_queue(queue: dict, cap: int) -> None:
    for entry, younger in queue.items():
        if younger <= cap:
            queue[entry] = younger + 1


def retire_queue(queue: dict, count: int | None) -> None:
    if count is None:
        return
    for entry in [e for e, younger in queue.items() if younger >= count]:
        del queue[entry]


def add_to_queue(queue: dict, entry: tuple, younger: int = 0) -> None:
    queue[entry] = min(queue.get(entry, younger), younger)


# ---- issue and barrier counts -----------------------------------------------------------------
def relative_counts(waves: list[WaveAbs]) -> tuple[list[WaveAbs], dict[int, int]]:
    """Issue and barrier counts less the fewest of any running wave: what tells instances apart,
    and finite. Returns the waves and what was taken off each load's count (for counts kept
    elsewhere: the reads in flight, an ended wave's last loads)."""
    running = [w for w in waves if not w.ended]
    out = []
    for w in waves:
        w = w.copy()
        if w.ended:
            w.issued, w.passed = {}, {}
        out.append(w)
    shifts: dict[str, dict[int, int]] = {}
    # loads with an instance still in flight somewhere, or among an ended wave's last ones
    pending = {site for w in waves for site, _ in w.vm} | {site for w in waves for site, _, _ in w.final}
    for table in ("issued", "passed"):
        shift = shifts[table] = {}
        for site in {site for w in running for site in getattr(w, table)}:
            counts = [getattr(w, table).get(site, 0) for w in running]
            fewest = min((c for c in counts if c != UNKNOWN_COUNT), default=0)
            # a load every wave issued keeps count 1, not 0: "issued" stays told apart from
            # "never" while an instance of it may still pair. With none in flight and every wave at
            # one count, the next instance pairs alike either way: the count is forgotten (else
            # the loads of every region a path once took would tell states apart forever)
            forget = site not in pending and all(c == fewest for c in counts)
            shift[site] = fewest = fewest - 1 if table == "issued" and fewest > 0 and not forget else fewest
            for w in out:
                counts_of = getattr(w, table)
                if w.ended or site not in counts_of or counts_of[site] == UNKNOWN_COUNT:
                    continue
                counts_of[site] -= fewest
                if counts_of[site] == 0:
                    del counts_of[site]
    for w in out:
        if w.ended and w.final:
            w.final = frozenset((site, lds, _shifted(count, site, shifts["issued"])) for site, lds, count in w.final)
    return out, shifts["issued"]


def _shifted(count: int, site: int, shift: dict[int, int]) -> int:
    return count if count == UNKNOWN_COUNT else count - shift.get(site, 0)


def shifted_snapshot(snapshot: frozenset, shift: dict[int, int]) -> frozenset:
    """A read's issue counts, shifted as the waves' were. A count shifted to 0 or below is one
    older than any instance that can still pair with the read: it reads as never issued."""
    if not shift:
        return snapshot
    return frozenset(
        (load, _shifted(count, load, shift))
        for load, count in snapshot
        if count == UNKNOWN_COUNT or count > shift.get(load, 0)
    )


def phases_apart(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two waves' last barriers are different rendezvous points of the program (a
    different barrier, or the same one a known number of times apart). Unknown counts (joined
    paths) are taken as aligned: that keeps a finding an error rather than making it latent."""
    if a[0] != b[0]:
        return True
    return UNKNOWN_COUNT not in (a[1], b[1]) and a[1] != b[1]
