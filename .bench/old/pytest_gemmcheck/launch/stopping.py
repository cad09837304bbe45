"""When a case's launches stop: after a fixed count, or (``--gemmcheck-repeat=auto``) once the
bad-launch rate's upper bound is below the target, its lower bound above it (more launches
cannot show a kernel that is bad on every launch to be below the target), or the time budget
runs out; and, with ``--gemmcheck-stop-on-bad``, at the first bad launch. A stopping rule that
depends only on what was seen leaves the likelihood of the count unchanged: k bad in n launches
counts as k/n."""

from __future__ import annotations

import time

from ..config.table import AUTO, MAX_REPEAT, Settings
from ..judging.stats import format_percent, rate_lower_bound, rate_upper_bound


class StoppingRule:
    """One ``case.run``'s rule. ``limit`` is the most launches it allows (the fixed count, or the
    cap of an automatic one); ``reason`` is set once it stopped early."""

    def __init__(self, repeat: int | str, settings: Settings):
        self.auto = repeat == AUTO
        self.limit = MAX_REPEAT if self.auto else int(repeat)
        self.target_rate = settings.target_rate
        self.budget = settings.budget
        self.stop_on_bad = settings.stop_on_bad
        self.reason = ""  # "target", "above", "budget", or the words of another early stop
        self.stopped_on_bad = False
        self._started = time.monotonic()

    def start(self) -> None:
        self._started = time.monotonic()

    @property
    def reads_count_before_each_launch(self) -> bool:
        """Whether the rule needs every launch so far checked before it decides on the next."""
        return self.auto

    def launches_after(self, index: int) -> bool:
        """Whether a launch may follow launch ``index`` (whose work can then be queued ahead)."""
        return self.auto or index < self.limit

    def enough(self, bad: int, launches: int) -> bool:
        """An automatic rule, before the next launch: whether the rate's upper bound reached the
        target, its lower bound passed it, or the time ran out (``reason`` says which). A fixed
        count never stops here."""
        if not self.auto or launches < 1:
            return False
        if rate_upper_bound(bad, launches) < self.target_rate:
            self.reason = "target"
            return True
        if rate_lower_bound(bad, launches) > self.target_rate:
            self.reason = "above"
            return True
        if time.monotonic() - self._started >= self.budget:
            self.reason = "budget"
            return True
        return False

    def stops_at_bad(self, index: int, bad: int) -> bool:
        """--gemmcheck-stop-on-bad, after launch ``index``: whether the loop ends here."""
        if self.stop_on_bad and index < self.limit and bad:
            self.reason = f"stopped at launch {index}, the first bad one (--gemmcheck-stop-on-bad)"
            self.stopped_on_bad = True
            return True
        return False

    def capped(self) -> None:
        """The loop ran to the limit."""
        if self.auto:
            self.reason = f"stopped at the cap of {MAX_REPEAT:,} launches"

    def planned(self, launches: int) -> int:
        """The launches the run meant to make (a fixed count), or those it made (automatic)."""
        return launches if self.auto else self.limit

    def words(self, launches: int, bad: int) -> str:
        """Why the launches stopped, with the final counts (consistency included); "" when a
        fixed count simply ran to its end (a launch that raised or hung says so itself)."""
        if not (self.auto or self.stopped_on_bad):
            return ""
        bound, target = rate_upper_bound(bad, launches), self.target_rate
        after = f"stopped after {launches:,} launch{'es' if launches != 1 else ''}"
        if self.reason == "target":
            if bound < target:
                return f"{after}: rate < {format_percent(bound)} reached the target {format_percent(target)}"
            return (
                f"{after}, when the running count reached the target {format_percent(target)}; the final "
                f"count shows the rate only below {format_percent(bound)}"
            )
        if self.reason == "above":
            low = rate_lower_bound(bad, launches)
            if low > target:
                return f"{after}: rate > {format_percent(low)}, above the target {format_percent(target)}"
            return (
                f"{after}, when the running count put the rate above the target {format_percent(target)}; "
                f"the final count shows it only above {format_percent(low)}"
            )
        if self.reason == "budget":
            return (
                f"{after}: the {self.budget:g} s budget ran out with the rate shown only below "
                f"{format_percent(bound)} (target {format_percent(target)})"
            )
        return self.reason
