"""gemmcheck bisect: the noisy binary search on simulated histories (in memory, seeded), and
once end to end on a throwaway git repository whose CPU test starts corrupting launches at
one commit."""

import os
import shutil
import subprocess
import sys

import pytest

from gemmcheck_dev.bisect_simulation import Scenario, bayes, commit_of, plain
from pytest_gemmcheck.bisect.model import GOOD, Budget, Observation, Posterior, search

TRIALS = 20


# --- the model ------------------------------------------------------------------------------

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


@pytest.mark.parametrize("scenario,unit", [
    (Scenario(commits=64, culprit=37, rate=0.10), "launch"),
    (Scenario(commits=64, culprit=37, rate=0.02), "launch"),
    (Scenario(commits=64, culprit=37, rate=0.60, mode="per_process", racing=0.5), "process"),
], ids=["10%-per-launch", "2%-per-launch", "per-process-60%-half-racing"])
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
    outcome = search(63, lambda position, units: Observation(position, int(position >= 36), units, launches=units),
                     budget=Budget(seconds=25), clock=lambda: next(clock))
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
    outcome = search(10, lambda position, units: Observation(position, 0, units, launches=units),
                     seen={GOOD: (0, 500), 9: (40, 100), 3: (30, 100), 2: (0, 500)})
    assert outcome.stopped == "confident" and outcome.position == 3 and outcome.launches == 0


def test_a_bad_revision_that_never_fails_is_said_so():
    outcome = search(10, lambda position, units: Observation(position, 0, units, launches=units),
                     budget=Budget(launches=500))
    assert outcome.stopped == "no-failure" and outcome.position is None


def test_budget_words():
    from pytest_gemmcheck.bisect.bisect_cli import parse_budget

    assert parse_budget("2000") == Budget(launches=2000)
    assert parse_budget("10m") == Budget(seconds=600)
    import argparse
    with pytest.raises(argparse.ArgumentTypeError):
        parse_budget("lots")


def test_the_csv_of_a_bisection_is_its_probes_as_plain_values():
    from pytest_gemmcheck.bisect.bisect_cli import render

    probe = {"revision": "a" * 40, "position": 3, "bad": 1, "units": 5, "launches": 5, "seconds": 1.5, "source": "ran",
             "top_after": "b" * 40, "mass_after": 0.5, "note": ""}
    report = {"first_bad": None, "stopped": "budget", "stopped_words": "the budget was spent", "confidence": 0.95,
              "budget": "5 launches", "commits": 3, "unit": "launch", "units_counted": 5, "rate_good": 0.0,
              "rate_bad": 0.2, "launches": 5, "seconds": 1.5, "probes": [probe]}
    header, row = render(report, "csv").splitlines()
    assert header == "revision,position,bad,units,launches,seconds,source,top_after,mass_after,note"
    assert row == f"{'a' * 40},3,1,5,5,1.5,ran,{'b' * 40},0.5,"


# --- end to end -------------------------------------------------------------------------------

TEST_K = '''
import os
import random
from pathlib import Path

from kernels import FaultInjector, tiled_gemm

RATE = float((Path(__file__).parent / "BAD_RATE").read_text())


def test_k(gemmcheck):
    case = gemmcheck.case("bisected", m=32, n=32, k=64, quant="bf16", tile="16x16")
    x = case.inputs()
    # a seeded RNG per launch: the revision's rate, the process, the launch
    rng = random.Random(f"{RATE}:{os.getpid()}")
    bad = {i for i in range(1, 100_000) if rng.random() < RATE}
    case.run(FaultInjector(lambda out: tiled_gemm(x, out, tile=(16, 16)), "tile", bad, tile=(8, 8)))
'''


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def bisect_repo(tmp_path, examples_dir):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    shutil.copy(examples_dir / "cpu" / "kernels.py", repo / "kernels.py")
    (repo / "test_k.py").write_text(TEST_K)
    shas = []
    for i in range(12):
        (repo / "BAD_RATE").write_text("0.3\n" if i >= 8 else "0.0\n")
        (repo / "NOTES").write_text(f"commit {i}\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"commit {i}" + (": the tail race" if i == 8 else ""))
        shas.append(_git(repo, "rev-parse", "HEAD"))
    return repo, shas


def test_end_to_end_finds_commit_8_in_worktrees_and_leaves_the_tree_alone(bisect_repo, db_url):
    """On SQLite and on the PostgreSQL server: the probes record into the user's database."""
    repo, shas = bisect_repo
    (repo / "untracked.txt").write_text("mine\n")
    before = _git(repo, "status", "--porcelain"), _git(repo, "rev-parse", "HEAD")
    db = db_url
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("GEMMCHECK_DB", None)
    command = [sys.executable, "-m", "pytest_gemmcheck.cli", "bisect", "--good", shas[0], "--bad", shas[11],
               "--test", "test_k.py::test_k", "--db", str(db)]
    done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    print(done.stdout, done.stderr)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"first bad revision: {shas[8][:12]} ")
    assert "commit 8: the tail race" in done.stdout
    assert "stopped: one revision holds the asked confidence" in done.stdout
    # the user's tree is as it was, and no worktree is left
    assert (_git(repo, "status", "--porcelain"), _git(repo, "rev-parse", "HEAD")) == before
    assert len(_git(repo, "worktree", "list").splitlines()) == 1
    # each probe is a recorded run tagged bisect:<rev>; a second bisect reruns nothing
    from sqlalchemy import create_engine, text
    engine = create_engine(db_url)
    with engine.connect() as connection:
        tags = [row[0] for row in connection.execute(text("select tag from run"))]
    engine.dispose()
    assert tags and all(tag.startswith("bisect:") for tag in tags)
    again = subprocess.run(command + ["--format", "json"], cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    import json
    report = json.loads(again.stdout)
    assert report["first_bad"]["revision"] == shas[8]
    assert report["launches"] == 0 and {p["source"] for p in report["probes"]} == {"history"}


def test_a_probe_command_that_exits_125_is_a_skip_and_no_worktree_is_left(bisect_repo, tmp_path):
    repo, shas = bisect_repo
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "pytest_gemmcheck.cli", "bisect", "--good", shas[0],
                           "--bad", shas[11], "--db", str(tmp_path / "h.db"), "--", "sh", "-c", "exit 125"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert done.stdout.startswith("no first bad revision: the --bad revision could not be probed (a skip)")
    assert f"skipped {shas[11][:12]}: exit status 125" in done.stdout
    assert len(_git(repo, "worktree", "list").splitlines()) == 1


def test_a_test_that_does_not_exist_measures_nothing_and_claims_no_rate(bisect_repo, tmp_path):
    """Every probe skipped: zero launches counted, so no rate on either side, in words or JSON."""
    repo, shas = bisect_repo
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("GEMMCHECK_DB", None)
    command = [sys.executable, "-m", "pytest_gemmcheck.cli", "bisect", "--good", shas[0], "--bad", shas[11],
               "--test", "test_k.py::nosuch", "--db", str(tmp_path / "h.db")]
    done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 3, done.stderr
    assert done.stdout.startswith("no first bad revision: the --bad revision could not be probed (a skip)")
    assert "counted in launches: none was counted (every probe was skipped), so there is no rate to tell" in done.stdout
    assert "rate before" not in done.stdout
    assert f"skipped {shas[11][:12]}: exit status 4" in done.stdout
    import json
    report = json.loads(subprocess.run(command + ["--format", "json"], cwd=repo, env=env, capture_output=True,
                                       text=True, timeout=300).stdout)
    assert (report["units_counted"], report["rate_good"], report["rate_bad"]) == (0, None, None)
