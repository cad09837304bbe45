"""--gemmcheck-repeat=auto stops once the count settles the question either way: the rate's
upper bound below the target (clean enough), or its lower bound above it (more launches cannot
show a kernel that is bad on every launch to be below the target); else at the budget."""

import pytest

from pytest_gemmcheck.config.table import Settings
from pytest_gemmcheck.judging.stats import format_percent, rate_interval, rate_lower_bound, rate_upper_bound
from pytest_gemmcheck.launch.stopping import StoppingRule


def auto(target=0.01, budget=600.0):
    return StoppingRule("auto", Settings(repeat="auto", target_rate=target, budget=budget))


def test_the_lower_bound_is_the_clopper_pearson_one():
    assert rate_lower_bound(1, 1) == pytest.approx(0.05)  # 1 - (1 - 0.05)**(1/1): p**1 = 0.05 at the bound
    assert rate_lower_bound(20, 20) == pytest.approx(0.05 ** (1 / 20))
    assert rate_lower_bound(0, 50) == 0.0 and rate_lower_bound(0, 0) == 0.0
    low, high = rate_interval(3, 12)
    assert low == pytest.approx(rate_lower_bound(3, 12, 0.975)) and high == rate_upper_bound(3, 12, 0.975)


@pytest.mark.parametrize("bad, launches, target", [(1, 1, 0.01), (20, 20, 0.5), (3, 10, 0.05), (12, 12, 0.7)])
def test_a_rate_shown_above_the_target_stops_it(bad, launches, target):
    rule = auto(target)
    assert rate_lower_bound(bad, launches) > target
    assert rule.enough(bad, launches) and rule.reason == "above"
    words = rule.words(launches, bad)
    assert words.startswith(f"stopped after {launches} launch{'es' if launches > 1 else ''}: rate > ")
    assert words.endswith(f"%, above the target {format_percent(target)}")


def test_the_words_of_a_kernel_bad_on_its_only_launch():
    rule = auto(0.01)
    assert rule.enough(1, 1)
    assert rule.words(1, 1) == "stopped after 1 launch: rate > 5.00%, above the target 1.00%"


@pytest.mark.parametrize("bad, launches, target", [(1, 1, 0.2), (1, 30, 0.01), (2, 100, 0.01), (0, 100, 0.01)])
def test_a_rate_not_yet_settled_goes_on(bad, launches, target):
    assert not auto(target).enough(bad, launches)


def test_the_final_count_speaks_when_it_differs_from_the_running_one():
    """A launch counted bad while running (outside the largest group of equal outputs so far)
    may be in the consensus at the end: the words say what the final count shows."""
    rule = auto(0.01)
    assert rule.enough(1, 1)
    assert rule.words(1, 0) == (
        "stopped after 1 launch, when the running count put the rate above the target "
        "1.00%; the final count shows it only above 0%"
    )


def test_a_fixed_count_never_stops_on_either_bound():
    rule = StoppingRule(12, Settings(repeat=12))
    assert not rule.enough(12, 12) and not rule.enough(0, 12) and rule.words(12, 12) == ""
