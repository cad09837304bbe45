"""The boundary around the smallest failing configuration: along each axis the passing values
nearest to it, and whether their launches tell them from it.

The walk: along m, n and k one step down, and up by doubling strides to the first passing value,
then bisecting to a failing value right beside a passing one; for quant and each param, the
other values in order until one passes. A configuration that make_launch skipped is no value of
the axis: the walk passes over it (at most ``SKIPS`` in a row).

The weighing: a passing neighbour has 0 bad launches out of its n, the failing configuration b
out of its f (its first probe stopped at its first bad launch, so it runs again to the end, at
least ``FAILING_LAUNCHES`` launches: its rate is what every side is weighed against). The
neighbour establishes a boundary only when a one-sided Fisher exact test
(judging.stats.fisher_greater, the test verdicts use) says the failing configuration's rate is
above the neighbour's at the session's alpha, divided among the boundary's sides (Bonferroni):
four clean launches beside a kernel that fails one launch in seven are its luck, not a region.
Where a side falls short, the launches that would establish it are worked out (the least n
whose 0/n passes the test against b/f), and the search spends them when they are few (at most
``EVIDENCE_FACTOR`` times a probe's launches): a side whose extra launches stay clean is then
established, one that fails is no boundary, and the walk goes on from there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..judging.stats import fisher_greater
from ..records.result import HUNG
from .space import NUMERIC, Config, index_of

if TYPE_CHECKING:
    from .search import Search

# The smallest failing configuration's launches run to the end, at least: the default repeat. A
# kernel failing 1 launch in 3 then has a boundary established by about 20 launches of a neighbour.
FAILING_LAUNCHES = 12
SKIPS = 8  # skipped configurations passed over in a row along an axis, looking for a probed one
EVIDENCE_FACTOR = 16  # a passing neighbour is given at most this many probes' launches to establish its side
MOST_LAUNCHES = 10**9  # the launches worked out as what would establish a side, searched up to


def sides(search: Search) -> int:
    """How many sides a boundary of this space may have: two along each axis of m, n and k that
    varies, one for quant and each param with a choice. The session's alpha is divided among them."""
    space = search.space
    numeric = sum(2 for name in NUMERIC if not space.axis(name).fixed)
    return numeric + sum(1 for count in (len(space.quants), *(len(v) for _, v in space.params)) if count > 1)


def walk(search: Search, config: Config, *, probe: bool = True) -> dict:
    """Per axis, the passing values nearest to ``config`` with the others as they are, each
    weighed. Without ``probe``, only from the configurations already seen (the budget ran out)."""
    boundary: dict = {}
    for name in NUMERIC:
        if not search.space.axis(name).fixed:
            boundary[name] = _walk(search, config, name) if probe else _seen_edge(search, config, name)
    boundary.update(_choices(search, config, probe=probe))
    _weigh(search, config, boundary)
    return boundary


def confirm(search: Search, config: Config) -> None:
    """The failing configuration's launches as evidence: its probe stopped at its first bad
    launch, so it runs again to the end (not after a hung launch: a GPU kernel cannot be
    stopped, and its device is lost)."""
    if config in search.confirmed:
        return
    search.confirmed.add(config)
    probes = search.probes_of[config]
    launches = max(search.repeat, FAILING_LAUNCHES)
    if sum(probe.launch_count for probe in probes) < launches and not any(HUNG in p.result.kinds for p in probes):
        search.more(config, launches, stop_on_bad=False)


def establish(search: Search, config: Config, boundary: dict) -> bool:
    """More launches for each side the evidence falls short on, where few would do; whether any
    ran (the boundary is then walked again: a neighbour that failed is none)."""
    cap = EVIDENCE_FACTOR * search.repeat
    ran = False
    for neighbour, side in _sides_of(search, config, boundary):
        if side["established"] or side["needs"] is None or side["needs"] > cap or neighbour in search.extended:
            continue
        search.extended.add(neighbour)
        search.more(neighbour, side["needs"] - side["launches"], stop_on_bad=True)
        ran = True
    return ran


def launches_to_establish(bad: int, launches: int, alpha: float) -> int | None:
    """The least n for which 0/n clean launches beside ``bad``/``launches`` pass the one-sided
    Fisher test at ``alpha``; None when no n can (no bad launch to compare)."""
    if bad <= 0 or fisher_greater(bad, launches, 0, MOST_LAUNCHES) >= alpha:
        return None
    low, high = 0, MOST_LAUNCHES  # p falls as n grows: the least n below alpha, by bisection
    while high - low > 1:
        middle = (low + high) // 2
        if fisher_greater(bad, launches, 0, middle) < alpha:
            high = middle
        else:
            low = middle
    return high


# --- the walk -----------------------------------------------------------------------------
def _state(search: Search, config: Config, name: str, index: int) -> bool | None:
    return search.state(search.space.replace(config, name, search.space.axis(name).values[index]))


def _decided(search: Search, config: Config, name: str, start: int, direction: int, stop: int):
    """From index ``start`` toward ``stop`` (not included), the first value of the axis whose
    configuration was not skipped: (index, failing), or None (the end, or ``SKIPS`` skipped)."""
    index = start
    for _ in range(SKIPS + 1):
        if index == stop or not 0 <= index < len(search.space.axis(name).values):
            return None
        state = _state(search, config, name, index)
        if state is not None:
            return index, state
        index += direction
    return None


def _walk(search: Search, config: Config, name: str) -> dict:
    values = search.space.axis(name).values
    at, top = values.index(getattr(config, name)), len(values)
    down = _decided(search, config, name, at - 1, -1, -1)
    below = values[down[0]] if down is not None and not down[1] else None
    last, above, reach = at, None, 1
    while above is None:  # doubling: a long failing run costs a logarithm of its length
        if at + reach >= top:  # the top of the axis, past the last stride
            found = _decided(search, config, name, top - 1, -1, last) if last < top - 1 else None
            if found is not None:
                last, above = (found[0], None) if found[1] else (last, found[0])
            break
        found = _decided(search, config, name, at + reach, 1, top)
        if found is None:
            break
        if found[1]:
            last, reach = found[0], 2 * (found[0] - at)
        else:
            above = found[0]
    while above is not None and above - last > 1:  # bisect to a failing value right beside a passing one
        middle = last + (above - last) // 2
        found = _decided(search, config, name, middle, 1, above) or _decided(search, config, name, middle - 1, -1, last)
        if found is None:
            break
        last, above = (found[0], above) if found[1] else (last, found[0])
    return _edge(values[at], below, values[above] if above is not None else None, values[last])


def _seen_edge(search: Search, config: Config, name: str) -> dict:
    value = getattr(config, name)
    passing = [
        getattr(other, name)
        for other in search.passing()
        if search.space.replace(config, name, getattr(other, name)) == other
    ]
    below = max((v for v in passing if v < value), default=None)
    above = min((v for v in passing if v > value), default=None)
    return _edge(value, below, above, None)


def _choices(search: Search, config: Config, *, probe: bool) -> dict:
    """quant and params: the first other value (in the order given) that passes, probed when
    ``probe``, else only among the configurations already seen."""
    space = search.space
    found: dict = {}
    params: dict = {}
    for name, current, values in _choice_axes(search, config):
        other = None
        for index in range(len(values)):
            candidate = space.replace(config, name, index)
            if index != current and (search.state(candidate) if probe else search.known(candidate)) is False:
                other = values[index]
                break
        edge = {"fails": values[current], "passes": None, "other": other}
        if name == "quant":
            found["quant"] = edge
        else:
            params[name] = edge
    if params:
        found["params"] = params
    return found


def _choice_axes(search: Search, config: Config):
    space = search.space
    axes = [("quant", config.quant, space.quants)]
    axes += [(name, config.params[position], values) for position, (name, values) in enumerate(space.params)]
    return [(name, current, values) for name, current, values in axes if len(values) > 1]


def _edge(fails: int, below: int | None, above: int | None, fails_up_to: int | None) -> dict:
    """One axis's boundary before it is weighed: the failing value, the passing values probed
    either side, and the last failing value of the run up to ``above``."""
    return {"fails": fails, "passes": None, "below": below, "above": above, "fails_up_to": fails_up_to}


# --- the weighing -------------------------------------------------------------------------
def _sides_of(search: Search, config: Config, boundary: dict):
    """(the neighbour's configuration, its side's evidence) for every passing side."""
    space = search.space
    for name in NUMERIC:
        edge = boundary.get(name)
        for side in ("below", "above"):
            if edge and edge[side] is not None:
                yield space.replace(config, name, edge[side]), edge["evidence"][side]
    choices = [("quant", boundary.get("quant"))] + list((boundary.get("params") or {}).items())
    for name, edge in choices:
        if edge and edge["other"] is not None:
            values = space.quants if name == "quant" else dict(space.params)[name]
            yield space.replace(config, name, index_of(values, edge["other"])), edge["evidence"]["other"]


def _weigh(search: Search, config: Config, boundary: dict) -> None:
    """Each passing side's evidence against the failing configuration's, and ``passes``: the
    nearest side that is established (above on a tie), or None."""
    alpha = search.alpha / max(1, sides(search))
    bad, launches = search.counts(config)
    space = search.space
    for name in NUMERIC:
        edge = boundary.get(name)
        if edge:
            edge["evidence"] = {
                "fails": [bad, launches],
                **{
                    side: _side(search, space.replace(config, name, edge[side]), bad, launches, alpha)
                    if edge[side] is not None
                    else None
                    for side in ("below", "above")
                },
            }
            established = [
                edge[side]
                for side in ("below", "above")
                if edge[side] is not None and edge["evidence"][side]["established"]
            ]
            edge["passes"] = min(established, key=lambda v: (abs(v - edge["fails"]), -v)) if established else None
    for name, current, values in _choice_axes(search, config):
        edge = boundary["quant"] if name == "quant" else boundary["params"][name]
        other = edge["other"]
        side = (
            None
            if other is None
            else _side(search, space.replace(config, name, index_of(values, other)), bad, launches, alpha)
        )
        edge["evidence"] = {"fails": [bad, launches], "other": side}
        edge["passes"] = other if side is not None and side["established"] else None


def _side(search: Search, neighbour: Config, bad: int, launches: int, alpha: float) -> dict:
    side_bad, side_launches = search.counts(neighbour)
    p = fisher_greater(bad, launches, side_bad, side_launches)
    return {
        "bad": side_bad,
        "launches": side_launches,
        "p": p,
        "alpha": alpha,
        "established": p < alpha,
        "needs": launches_to_establish(bad, launches, alpha),
    }
