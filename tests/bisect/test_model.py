"""bisect/model.py's noisy binary search on simulated histories (in memory, seeded): probe
lengths, the posterior, the seeded trials against plain bisection, budgets and skips; and a
--good revision that fails as well, found at once and said, instead of a search over a range
with no change in it (before: 53 probes, then a 'most likely first bad revision' among commits
that all fail). Once end to end, on a git repository: tests/commands/test_bisect.py."""

import pytest

from gemmcheck_dev.bisect_simulation import Scenario, bayes, commit_of, plain
from pytest_gemmcheck.bisect.model import GOOD, Budget, Observation, Outcome, Posterior, good_check_units, search

TRIALS = 20


def test_probes_are_longer_where_the_bad_rate_is_lower():
    """A clean probe tells something only when it is long enough to have shown the bad rate:
    the plan sizes the same question with more launches at 2% than at 10%, and asks it at a
    revision in doubt."""
    sizes = {}
    for rate in (0.10, 0.02):
        posterior = Posterior(63)
        posterior.add(62, 20, int(20 / rate))  # the --bad revision, at that rate
        position, sizes[rate] = posterior.plan()
        assert 0 <= position < 62
    assert sizes[0.02] > 2 * sizes[0.10], sizes


def test_a_probe_that_stops_at_its_first_bad_launch_is_counted_as_run():
    """The stopping rule depends only on what was seen: 1 bad in the 7 launches run is the
    same evidence however the probe came to stop there."""
    stopped, fixed = Posterior(8), Posterior(8)
    for posterior in (stopped, fixed):
        posterior.add(7, 3, 30)
    stopped.add(4, 1, 7)
    fixed.add(4, 1, 7)
    assert stopped.probabilities() == fixed.probabilities()


def test_the_good_side_never_failing_is_a_prior_not_an_assumption():
    """A --good revision seen failing moves the model to its unknown-rate half: a failure
    before the culprit then does not pin the culprit at or before it."""
    posterior = Posterior(8)
    posterior.add(7, 30, 100)
    posterior.add(2, 0, 200)
    assert sum(posterior.probabilities()[3:]) > 0.99  # clean at 2: the culprit is after it
    posterior.add(GOOD, 2, 400)  # the good side fails now and then: 2 in 400
    assert posterior.rates()[0] == pytest.approx(2.5 / 601)  # pooled before the top revision: 2 in 600
    posterior.add(1, 1, 50)  # one bad launch at 1 fits the good side's own rate
    assert sum(posterior.probabilities()[3:]) > 0.9


def test_posterior_moves_with_the_evidence():
    posterior = Posterior(8)
    assert posterior.top()[1] == pytest.approx(1 / 8)
    posterior.add(GOOD, 0, 100)
    posterior.add(7, 30, 100)
    posterior.add(3, 25, 100)  # revision 3 bad: the culprit is 0..3
    probs = posterior.probabilities()
    assert sum(probs[:4]) > 0.999
    posterior.add(2, 0, 100)  # revision 2 clean at a 30% rate: revision 3 is the culprit
    assert posterior.top()[0] == 3 and posterior.top()[1] > 0.999
    assert posterior.plan() is None  # nothing left in doubt
    with pytest.raises(ValueError):
        posterior.add(1, 5, 4)


@pytest.mark.parametrize(
    "scenario,unit",
    [
        (Scenario(commits=64, culprit=37, rate=0.10), "launch"),
        (Scenario(commits=64, culprit=37, rate=0.02), "launch"),
        (Scenario(commits=64, culprit=37, rate=0.60, mode="per_process", racing=0.5), "process"),
    ],
    ids=["10%-per-launch", "2%-per-launch", "per-process-60%-half-racing"],
)
def test_finds_commit_37_in_at_least_19_of_20_seeded_trials(scenario, unit):
    outcomes = [bayes(scenario, seed, unit=unit, confidence=0.95) for seed in range(TRIALS)]
    found = [commit_of(o.position) for o in outcomes]
    assert sum(commit == 37 for commit in found) >= 19, found
    assert sum(o.stopped == "confident" for o in outcomes) >= 19
    # a probe at the bad rate's lowest sizes: more launches where the rate is low
    assert all(o.mass >= 0.95 for o in outcomes if o.stopped == "confident")


def test_per_process_race_counted_per_launch_misleads_and_per_process_does_not():
    """The assumption that launches are independent within a probe, broken: a process either
    races or is clean throughout, so one clean probe of many launches says little. Counted per
    launch the search goes wrong most of the time; counted per process it does not."""
    scenario = Scenario(rate=0.60, mode="per_process", racing=0.5)
    per_launch = sum(commit_of(bayes(scenario, seed, unit="launch").position) == 37 for seed in range(TRIALS))
    per_process = sum(commit_of(bayes(scenario, seed, unit="process").position) == 37 for seed in range(TRIALS))
    assert per_launch <= 10 < 19 <= per_process


def test_plain_bisection_at_12_clean_launches_is_wrong_on_a_10_percent_failure():
    found = [plain(Scenario(rate=0.10), seed)[0] for seed in range(TRIALS)]
    assert sum(commit == 37 for commit in found) <= 12


def test_the_budget_stops_the_search_and_says_so():
    outcome = bayes(Scenario(rate=0.02), 0, budget=Budget(launches=300))
    assert outcome.stopped == "budget" and outcome.launches <= 300
    clock = iter(range(0, 10_000, 10))
    outcome = search(
        63,
        lambda position, units: Observation(position, int(position >= 36), units, launches=units),
        budget=Budget(seconds=25),
        clock=lambda: next(clock),
    )
    assert outcome.stopped == "budget"


def test_skipped_revisions_and_history_counts():
    def probe(position, units):
        if position == 5:
            return Observation(position, 0, 0, source="skip")
        return Observation(position, units if position >= 5 else 0, units, launches=units)

    # revision 5 cannot be probed (it does not build): the culprit is 5 or 6, as git bisect says
    outcome = search(10, probe)
    assert outcome.stopped == "exhausted"
    assert {commit for commit, p in enumerate(outcome.probabilities) if p > 0.01} == {5, 6}
    # counts already in the history cost nothing
    outcome = search(
        10,
        lambda position, units: Observation(position, 0, units, launches=units),
        seen={GOOD: (0, 500), 9: (40, 100), 3: (30, 100), 2: (0, 500)},
    )
    assert outcome.stopped == "confident" and outcome.position == 3 and outcome.launches == 0


def test_a_bad_revision_that_never_fails_is_said_so():
    outcome = search(
        10, lambda position, units: Observation(position, 0, units, launches=units), budget=Budget(launches=500)
    )
    assert outcome.stopped == "no-failure" and outcome.position is None


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
