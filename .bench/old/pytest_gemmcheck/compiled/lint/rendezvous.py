"""The hazards between waves at a rendezvous of the dataflow engine: each wave's reads of a phase
against the loads other waves had in flight at their last barrier, against the other waves'
loads and DS writes of the same phase, and the reads still in flight at a barrier against what
follows it; each pair of records checked once per content, each pair of instructions reported
once.
"""

from __future__ import annotations

import functools

from .kernel_facts import KernelFacts
from .lds_ranges import Ranges, merge_ranges, overlap
from .phase_states import (
    ANYWHERE,
    UNKNOWN_COUNT,
    UNKNOWN_WRITE,
    Group,
    Hazard,
    Outcome,
    PhaseRecord,
    Unchecked,
    WaveAbs,
    phases_apart,
)


class RendezvousChecker:
    """Checks the waves of one kernel at each rendezvous (:meth:`check_phase`), adding what it
    finds to ``outcome``."""

    def __init__(self, facts: KernelFacts, outcome: Outcome):
        self.facts = facts
        self.outcome = outcome
        self.paired: set[tuple] = set()  # the read/load pairs of a phase's loads already recorded
        self.start_phase()

    def start_phase(self) -> None:
        """Forget what the last phase's checks held: a new phase's records are its own."""
        self.overlapping: dict[tuple, tuple] = {}  # (a wave's phase record's loads, read bytes) -> its loads there
        self.checked_writes: set[tuple] = set()  # the records (and pairs of them) checked for DS writes
        # the read/load pairs checked in this phase: another combination of end states pairs the
        # same records again, and only its trace would differ (the first one is reported)
        self.checked_loads: set[tuple] = set()
        self.contents: dict = {}  # what records (runs under other decisions) hold, one number per distinct content
        self.content_numbers: dict[tuple, int] = {}  # (part, id of what holds it) -> its content's number

    def check_phase(self, group: Group, waves: list[WaveAbs], records: list[PhaseRecord], trace: tuple) -> None:
        before = group.waves
        # a read against the phase's loads depends on the records alone: once per content of them
        loads = tuple(self._content("loads", record) for record in records)
        for v, record in enumerate(records):
            against_loads = ("concurrent", v, self._content("snapshots", record), loads)
            concurrent = against_loads not in self.checked_loads
            self.checked_loads.add(against_loads)
            for (read, lds), issued in record.reads.items():
                for seen in group.visible:
                    if seen.wave == v:
                        continue
                    shared = overlap(lds, seen.lds)
                    if not shared:
                        continue
                    # retired by the load's wave before a barrier of its own (an ended wave has none)
                    retired = (seen.site, seen.lds) not in waves[seen.wave].vm and not waves[seen.wave].ended
                    checked = ("visible", v, read, lds, self._content("issued", issued), seen, retired)
                    if checked in self.checked_loads:
                        continue
                    self.checked_loads.add(checked)
                    shared = ANYWHERE if _is_anywhere(lds) else shared
                    if seen.after_end is not None:
                        # issued after the ended wave's last rendezvous: as unordered as a load of this phase
                        cover = f"s_waitcnt vmcnt(0) + s_barrier in wave {seen.wave} after its load, before it ends"
                        pair = f"wave {seen.wave} ended without passing another barrier"
                        for severity in _weights(issued, seen.site, seen.after_end):
                            self._cross(
                                severity, read, seen.site, v, seen.wave, shared, "after-end", cover, pair, trace, group
                            )
                        continue
                    apart = phases_apart(before[v].at_barrier(), (seen.barrier, seen.passed))
                    pair = self._pair(v, before[v].barrier, seen.wave, seen.barrier, apart)
                    cover = (
                        f"s_waitcnt vmcnt({seen.younger}) in wave {seen.wave} before its barrier at line "
                        f"{self.facts.line(seen.barrier)}"
                    )
                    for severity in _weights(issued, seen.site, seen.count):
                        # a load the read does not mean to see, issued before it: a refill that may overtake it.
                        # Retired by its wave before a barrier that pairs with a later one of the reader's:
                        # latent where a whole barrier phase lies between the load's issue and the read (HTI's
                        # offset), an error where the load was issued in the phase that ended here (as behind a
                        # barrier with no wait: the offset adds no elapsed time)
                        how = "visible"
                        if severity == "error" and apart and retired:
                            severity, how = ("latent", how) if seen.carried else (severity, "visible-offset")
                        self._cross(severity, read, seen.site, v, seen.wave, shared, how, cover, pair, trace, group)
                if concurrent:
                    self._against_phase_loads(
                        records,
                        v,
                        read,
                        lds,
                        issued,
                        "concurrent",
                        trace,
                        group,
                        "s_waitcnt lgkmcnt(0) + s_barrier in wave {v} between its read and wave {w}'s load",
                    )
        if ("in-flight", loads) not in self.checked_loads:
            self.checked_loads.add(("in-flight", loads))
            for v, read, lds, issued in group.reads:
                self._against_phase_loads(
                    records,
                    v,
                    read,
                    lds,
                    issued,
                    "in-flight",
                    trace,
                    group,
                    "s_waitcnt lgkmcnt(0) in wave {v} before its barrier at line {line}",
                )
        self._check_writes(group, records, trace)
        self._check_uniform_reads(group, records)

    def _check_uniform_reads(self, group: Group, records: list[PhaseRecord]) -> None:
        """The reads whose data a wave took as the same in every wave (one address in every lane
        of every wave, the waves at one rendezvous) against everything that may change those bytes
        between two waves' reads: another wave's DS write or global->LDS load of the phase, of any
        address, and those in flight at a barrier or left by an ended wave. Where one may, the
        waves may have read different values and gone different ways at a branch on it, which
        the analysis did not follow: the read is unchecked (also when its pairs are reported)."""
        for v, record in enumerate(records):
            checked = (
                "uniform",
                v,
                frozenset(record.uniform),
                tuple(self._content("writes", r) for r in records),
                tuple(self._content("loads", r) for r in records),
            )
            if not record.uniform or checked in self.checked_writes:
                continue
            self.checked_writes.add(checked)
            others = [(w, site, lds) for w, other in enumerate(records) if w != v for site, lds in other.writes]
            others += [(w, site, lds) for w, other in enumerate(records) if w != v for site, lds, _ in other.loads]
            others += [(w, site, lds) for w, site, lds in group.written if w != v]
            others += [(seen.wave, seen.site, seen.lds) for seen in group.visible]
            for read, lds in sorted(record.uniform):
                changed = next(((w, site) for w, site, written in others if _shared(lds, written)), None)
                if changed is not None:
                    w, site = changed
                    self.outcome.flag(
                        read,
                        v,
                        f"this read's data was taken as the same in every wave (one address "
                        f"in every lane of every wave), but wave {w}'s write at line "
                        f"{self.facts.line(site)} may change it between the waves' reads: what "
                        "depends on its value was not checked",
                    )

    def _check_writes(self, group: Group, records: list[PhaseRecord], trace: tuple) -> None:
        """The phase's reads against the other waves' DS writes that nothing orders with them:
        those of the same phase (either may come first: no barrier both pass lies between), and
        those a wave still had in flight at its last barrier or left behind when it ended; the
        reads still in flight at their wave's last barrier against the phase's writes. Each pair
        of a reading and a writing wave's records once per phase: another combination of end
        states finds the same pairs (the first trace is the one reported)."""
        before = group.waves
        for w, record in enumerate(records):
            checked = (w, self._content("writes", record))
            if not record.writes or checked in self.checked_writes:
                continue
            self.checked_writes.add(checked)
            for v, read, lds in self._in_flight_reads(group):
                if v == w:
                    continue
                cover = (
                    f"s_waitcnt lgkmcnt(0) in wave {v} before its barrier at line {self.facts.line(before[v].barrier)}"
                )
                for write, shared in self._overlapping_writes(record, lds, frozenset()):
                    self._write_race(
                        "warning",
                        read,
                        write,
                        v,
                        w,
                        shared,
                        "ds-in-flight",
                        cover,
                        self._pair_of(before, v, w),
                        trace,
                        group,
                    )
        for v, record in enumerate(records):
            if not record.reads:
                continue
            for w, other in enumerate(records):
                checked = (v, w, self._content("reads", record), self._content("writes", other))
                if w == v or not other.writes or checked in self.checked_writes:
                    continue
                self.checked_writes.add(checked)
                cover = (
                    f"s_waitcnt lgkmcnt(0) + s_barrier in wave {w} between its write and wave {v}'s read, or "
                    f"s_barrier between wave {v}'s read and wave {w}'s write"
                )
                pair = self._pair_of(before, v, w)
                for read, prior, lds in self._reads_by_site(record):
                    if _is_anywhere(lds):
                        # a read of unknown address: only writes it means to see can be reported
                        # (undecided, once per read and wave); those that may overtake it need its address
                        noted = self.outcome.undecided.get(read)
                        if noted is not None and v in noted.waves:
                            continue
                        for write in sorted(prior & self._write_sites(other)):
                            self._write_race(
                                "error", read, write, v, w, ANYWHERE, "ds-concurrent", cover, pair, trace, group
                            )
                        continue
                    for write, shared in self._overlapping_writes(other, lds, prior):
                        # after its own copy of the write, the read means to see it: an error;
                        # else the write may overtake a read of what the bytes held before
                        severity = "error" if write in prior else "warning"
                        self._write_race(
                            severity, read, write, v, w, shared, "ds-concurrent", cover, pair, trace, group
                        )
        for v, record in enumerate(records):
            checked = (v, self._content("reads", record))
            if not record.reads or not group.written or checked in self.checked_writes:
                continue
            self.checked_writes.add(checked)
            for w, write, write_lds in group.written:
                if v == w:
                    continue
                ended = before[w].ended
                cover = (
                    f"s_waitcnt lgkmcnt(0) + s_barrier in wave {w} after its write, before it ends"
                    if ended
                    else f"s_waitcnt lgkmcnt(0) in wave {w} before its barrier at line "
                    f"{self.facts.line(before[w].barrier)}"
                )
                pair = f"wave {w} ended without passing another barrier" if ended else self._pair_of(before, v, w)
                for read, _, lds in self._reads_by_site(record):
                    shared = _shared(lds, write_lds)
                    if shared:
                        self._write_race("error", read, write, v, w, shared, "ds-visible", cover, pair, trace, group)

    def _content(self, part: str, held) -> int:
        """One number for each distinct content of a record's part (or of a read's snapshots) in
        this phase: runs of a wave under other decisions often record the same, and a pair
        checked once needs no second check."""
        key = (part, id(held))
        number = self.content_numbers.get(key)
        if number is None:
            content = (part, _CONTENTS[part](held))
            number = self.content_numbers[key] = self.contents.setdefault(content, len(self.contents))
        return number

    def _pair_of(self, before: list[WaveAbs], v: int, w: int) -> str:
        return self._pair(
            v, before[v].barrier, w, before[w].barrier, phases_apart(before[v].at_barrier(), before[w].at_barrier())
        )

    def _in_flight_reads(self, group: Group) -> tuple:
        """(wave, read, bytes) of the reads in flight at the phase's start, the instances of one
        read in one wave as one set of bytes, once per phase."""
        cached = self.overlapping.get("in flight")
        if cached is None:
            grouped: dict[tuple, list] = {}
            for v, read, lds, _ in group.reads:
                grouped.setdefault((v, read), []).append(lds)
            cached = self.overlapping["in flight"] = tuple(
                (v, read, _union(parts)) for (v, read), parts in sorted(grouped.items())
            )
        return cached

    def _reads_by_site(self, record: PhaseRecord) -> tuple:
        """(read, the writes its wave issued before it, bytes) of a wave's reads in a phase, the
        bytes of the instances with the same prior writes as one set, once per record."""
        key = ("reads", id(record))
        cached = self.overlapping.get(key)
        if cached is None:
            grouped: dict[tuple, list] = {}
            for read, lds in record.reads:
                grouped.setdefault((read, record.prior.get((read, lds), frozenset())), []).append(lds)
            cached = self.overlapping[key] = tuple(
                (read, prior, _union(parts))
                for (read, prior), parts in sorted(grouped.items(), key=lambda item: item[0][0])
            )
        return cached

    def _write_sites(self, record: PhaseRecord) -> frozenset:
        return frozenset(site for site, _ in self._writes_by_site(record)[1])

    def _overlapping_writes(self, record: PhaseRecord, lds: Ranges, meant: frozenset):
        """(write, shared bytes) of a wave's DS writes in a phase that may overlap ``lds``: the
        union of them all first (in a race-free phase it overlaps nothing), then each write; of
        unknown address only those of ``meant`` (writes the read means to see: undecided, where
        a write that may overtake the read needs the addresses)."""
        union, sites = self._writes_by_site(record)
        if not _shared(lds, union):
            return
        for write, written in sites:
            if _is_anywhere(written) and write not in meant:
                continue
            shared = _shared(lds, written)
            if shared:
                yield write, shared

    def _writes_by_site(self, record: PhaseRecord) -> tuple:
        """(the union of a wave's DS writes' bytes in a phase, (write, its bytes over all its
        instances) for each), once per record."""
        key = ("writes", id(record))
        cached = self.overlapping.get(key)
        if cached is None:
            by_site: dict[int, list] = {}
            for site, written in record.writes:
                by_site.setdefault(site, []).append(written)
            sites = tuple((site, _union(parts)) for site, parts in sorted(by_site.items()))
            union = _union([b for _, b in sites])
            cached = self.overlapping[key] = (union, sites)
        return cached

    def _write_race(self, severity, read, write, reader, writer, lds, how, cover, pair, trace, group) -> None:
        """An error: the read means to see the write (the reader issued its own copy first, or
        the write was in flight at a barrier before the read); a warning: the write may overtake
        a read of what the bytes held before, which only the time the writer takes orders."""
        seen = (severity, read, write, reader, writer, lds, how, group.merged)
        if seen in self.paired:
            return
        self.paired.add(seen)
        if _is_anywhere(lds):
            # as for refills, an overtaking write needs the addresses to be told from one that cannot
            if severity == "warning":
                return
            item = self.outcome.undecided.setdefault(
                read,
                Unchecked(
                    read,
                    set(),
                    (
                        f"{UNKNOWN_WRITE}, and wave {writer}'s DS write at line {self.facts.line(write)} "
                        f"is not ordered with this read of wave {reader}: the pair was not decided"
                    ),
                ),
            )
            item.waves.add(reader)
            item.merged.update(self.outcome.merged)
            return
        self.outcome.hazards.append(
            Hazard(severity, read, write, reader, writer, lds, how, cover, pair, trace, group.merged)
        )

    def _against_phase_loads(self, records, v, read, lds, issued, how, trace, group, refill_cover: str) -> None:
        """A read of wave ``v`` against the other waves' loads of this phase: nothing orders them."""
        before = group.waves
        for w, record in enumerate(records):
            if w == v or not record.loads:
                continue
            loads = self._content("loads", record)
            checked = (how, v, read, lds, self._content("issued", issued), w, loads)
            if checked in self.checked_loads:
                continue
            self.checked_loads.add(checked)
            overlapping = self.overlapping.get((loads, lds))
            if overlapping is None:
                overlapping = self.overlapping[(loads, lds)] = tuple(_overlapping_loads(record, lds))
            if not overlapping:
                continue
            pair = self._pair_of(before, v, w)
            for load, shared, count in overlapping:
                shared = ANYWHERE if _is_anywhere(lds) else shared
                for severity in _weights(issued, load, count):
                    # the same pair again, from another combination of end states or decisions:
                    # it would add nothing to the finding (its first trace is the one reported)
                    seen = (severity, read, load, v, w, shared, how, before[v].barrier, refill_cover, group.merged)
                    if seen in self.paired:
                        continue
                    self.paired.add(seen)
                    cover = (
                        f"s_waitcnt vmcnt(0) + s_barrier in wave {w} between its load and wave {v}'s read"
                        if severity == "error"
                        else refill_cover.format(v=v, w=w, line=self.facts.line(before[v].barrier))
                    )
                    self._cross(severity, read, load, v, w, shared, how, cover, pair, trace, group)

    def _cross(self, severity, read, load, reader, writer, lds, how, cover, pair, trace, group) -> None:
        if _is_anywhere(lds):
            # a read of unknown address: a load it would mean to see may write it (unchecked); a
            # refill it may overtake needs its address to be told apart from one that cannot
            if severity != "warning":
                self.outcome.unknown_read(read, reader, self.facts.line(load), writer)
            return
        self.outcome.hazards.append(
            Hazard(severity, read, load, reader, writer, lds, how, cover, pair, trace, group.merged)
        )

    def _pair(self, v: int, v_barrier: int, w: int, w_barrier: int, apart: bool) -> str:
        if v_barrier < 0 and w_barrier < 0:
            return "no barrier before either"
        if not apart:
            return f"both waves last passed the barrier at line {self.facts.line(v_barrier)}"
        if v_barrier == w_barrier:
            return (
                f"waves {v} and {w} last passed the barrier at line {self.facts.line(v_barrier)} in different "
                f"iterations: the waves run a barrier phase apart"
            )
        return (
            f"wave {v} last passed the barrier at line {self.facts.line(v_barrier)}, paired with wave {w}'s at "
            f"line {self.facts.line(w_barrier)}: the waves run a barrier phase apart"
        )


# what each part of a phase record holds, as a value to compare (see RendezvousChecker._content)
_CONTENTS = {
    "issued": frozenset,  # a read's snapshots of its wave's issue counts
    "snapshots": lambda record: frozenset((read, frozenset(issued)) for read, issued in record.reads.items()),
    "reads": lambda record: (frozenset(record.reads), frozenset(record.prior.items())),
    "loads": lambda record: frozenset(record.loads),
    "writes": lambda record: frozenset(record.writes),
}


def _is_anywhere(lds: Ranges) -> bool:
    """Whether ``lds`` stands for a read of unknown address."""
    return lds == ANYWHERE


def _union(parts: list[Ranges]) -> Ranges:
    """The bytes of several accesses as one set: ANYWHERE when any address is unknown."""
    if len(parts) == 1:
        return parts[0]
    if any(map(_is_anywhere, parts)):
        return ANYWHERE
    return merge_ranges([r for b in parts for r in b])


def _shared(a: Ranges, b: Ranges) -> Ranges:
    """The bytes two accesses may share: ANYWHERE when either address is unknown."""
    if _is_anywhere(a) or _is_anywhere(b):
        return ANYWHERE
    return overlap(a, b)


def _weights(snapshots, load: int, count: int) -> set[str]:
    """For an unordered load instance and the instances of a read: "error" where the reading wave
    issued its own copy of that load instance (or a later one) before the read, so the program
    means the read to see it (every wave runs the same code); "warning" where it did not, so the
    load refills bytes the read means to see as they were."""
    weights = set()
    for snapshot in snapshots:
        mine = _issue_counts(snapshot).get(load)
        same = mine is not None and (mine >= count or UNKNOWN_COUNT in (mine, count))
        weights.add("error" if same else "warning")
        if len(weights) == 2:
            break
    return weights


@functools.lru_cache(maxsize=1 << 16)
def _issue_counts(snapshot: frozenset) -> dict[int, int]:
    """A read's snapshot of its wave's issue counts, by load site (snapshots recur: read once)."""
    return dict(snapshot)


def _overlapping_loads(record: PhaseRecord, lds: Ranges):
    """(load, shared bytes, issue count) of a wave's loads in a phase that overlap ``lds``."""
    for load, load_lds, count in record.loads:
        shared = overlap(lds, load_lds)
        if shared:
            yield load, shared, count
