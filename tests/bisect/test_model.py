"""bisect/model.py's search: a --good revision that fails as well is found at once and said,
instead of a search over a range with no change in it (before: 53 probes, then a 'most likely
first bad revision' among commits that all fail)."""

from pytest_gemmcheck.bisect.model import GOOD, Budget, Observation, Outcome, good_check_units, search


def every_revision_fails(rate_every: int = 3):
    """A probe of a range whose every revision, --good too, fails every ``rate_every``-th launch,
    stopping at its first bad one."""
    calls = []

    def probe(position: int, units: int) -> Observation:
        calls.append((position, units))
        ran = min(units, rate_every)
        return Observation(position, int(ran == rate_every), ran, launches=ran)

    return probe, calls


def test_a_good_revision_that_fails_too_ends_the_search_after_its_check():
    probe, calls = every_revision_fails()
    outcome = search(63, probe, budget=Budget(launches=5000))
    assert outcome.stopped == "good-fails" and outcome.position is None
    assert [position for position, _ in calls] == [62, GOOD]  # --bad, then --good at once
    assert calls[1][1] == good_check_units(1, 3)
    assert "the --good revision fails too" in outcome.words()


def test_the_history_seeing_the_good_revision_fail_ends_it_before_any_probe():
    probe, calls = every_revision_fails()
    outcome = search(10, probe, seen={GOOD: (1, 40), 9: (3, 30)})
    assert (outcome.stopped, outcome.launches, calls) == ("good-fails", 0, [])


def test_a_good_revision_that_passes_its_check_and_fails_later_ends_it_too():
    """A --good failing rarely may pass its check; a later probe of it that fails ends the
    search with the same words. Here every commit fails within 3 launches: the search walks
    down to the first commit after --good and probes --good again."""
    good_probes = []

    def probe(position: int, units: int) -> Observation:
        if position == GOOD:
            good_probes.append(units)
            if len(good_probes) == 1:
                return Observation(position, 0, units, launches=units)  # its check: clean, by luck
            return Observation(position, 1, 1, launches=1)
        ran = min(units, 3)
        return Observation(position, int(ran == 3), ran, launches=ran)

    outcome = search(10, probe, confidence=0.999)
    assert len(good_probes) == 2 and outcome.stopped == "good-fails" and outcome.position is None
    assert outcome.observations[-1].position == GOOD


def test_a_clean_good_revision_is_checked_once_and_the_search_goes_on():
    def probe(position: int, units: int) -> Observation:
        bad = position >= 5
        return Observation(position, int(bad), 2 if bad else units, launches=2 if bad else units)

    outcome: Outcome = search(10, probe)
    assert outcome.stopped == "confident" and outcome.position == 5
    first = [(o.position, o.units) for o in outcome.observations[:2]]
    assert first == [(9, 2), (GOOD, good_check_units(1, 2))]


def test_the_check_is_as_long_as_the_bad_revision_took_per_bad_unit():
    assert good_check_units(1, 50) == 50 and good_check_units(3, 30) == 10
    assert good_check_units(1, 1) == 4 and good_check_units(1, 10_000) == 4096  # within least..most
    assert good_check_units(2, 3, least=1) == 2
