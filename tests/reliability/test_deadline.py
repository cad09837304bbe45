"""The launch deadline shares SIGALRM with whoever else uses it: pytest-timeout's signal and
thread methods keep working around and after a case, a test's own interval timer keeps firing
through a case's launches, and the launch deadline still fails a launch that does not end."""

import shutil
import signal
import textwrap
import time

import pytest
from kernels import bf16_matmul

from pytest_gemmcheck.config.table import Settings
from pytest_gemmcheck.errors import LaunchError

pytest.importorskip("pytest_timeout")

HANG_AFTER_CASE = """
    import time
    from kernels import bf16_matmul

    def test_hang_after_a_case(gemmcheck):
        case = gemmcheck.case("then_hangs", m=16, n=16, k=32)
        x = case.inputs()
        case.run(lambda out: bf16_matmul(x, out))
        time.sleep(60)
"""


@pytest.mark.parametrize("method", ["signal", "thread"])
def test_pytest_timeout_stops_a_hang_after_a_case(pytester, examples_dir, method):
    """Before, the test passed after its sleep: the case had cancelled pytest-timeout's timer."""
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makepyfile(test_hang=textwrap.dedent(HANG_AFTER_CASE))
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--timeout=4",
        f"--timeout-method={method}",
        "--gemmcheck-no-record",
        "--gemmcheck-repeat=3",
        timeout=300,
    )
    text = result.stdout.str() + result.stderr.str()
    assert "Timeout" in text and "1 passed" not in text, text
    if method == "signal":  # the test fails and the session reports it
        result.assert_outcomes(failed=1)
        assert "Timeout (>4.0s) from pytest-timeout" in text


def test_pytest_timeout_signal_method_stops_a_launch_that_does_not_end(pytester, examples_dir):
    """pytest-timeout's timer is due before the launch deadline: its handler runs inside the launch
    (before, the two 30 s launches ran to their end and the test passed)."""
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makepyfile(
        test_spin=textwrap.dedent("""
        import time
        from kernels import bf16_matmul

        def test_spin(gemmcheck):
            case = gemmcheck.case("spins", m=16, n=16, k=32)
            x = case.inputs()
            case.run(lambda out: time.sleep(30) or bf16_matmul(x, out))
    """)
    )
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--timeout=3",
        "--timeout-method=signal",
        "--gemmcheck-no-record",
        "--gemmcheck-launch-timeout=60",
        "--gemmcheck-repeat=2",
        timeout=300,
    )
    result.assert_outcomes(failed=1)
    assert "Timeout (>3.0s) from pytest-timeout" in result.stdout.str()


def test_a_tests_own_interval_timer_keeps_firing_through_the_launches(make_case):
    ticks = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: ticks.append(time.monotonic()))
    signal.setitimer(signal.ITIMER_REAL, 0.05, 0.05)
    try:
        case = make_case("ticking", m=16, n=16, k=32, settings=Settings(repeat=6, launch_timeout=30))
        x = case.inputs()
        before = len(ticks)
        case.run(lambda out: time.sleep(0.1) or bf16_matmul(x, out))
        during = len(ticks) - before
        assert signal.getsignal(signal.SIGALRM) is not previous  # still the test's own handler
        value, interval = signal.getitimer(signal.ITIMER_REAL)
        assert interval == pytest.approx(0.05) and 0 < value <= 0.05
        time.sleep(0.3)
        assert len(ticks) - before > during
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert during >= 6, f"the test's timer fired {during} times over six 0.1 s launches"


def test_the_previous_timer_gets_its_remaining_time_back(make_case):
    fired = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(1))
    signal.setitimer(signal.ITIMER_REAL, 5.0)
    try:
        case = make_case("quick", m=16, n=16, k=32, settings=Settings(repeat=3, launch_timeout=30))
        x = case.inputs()
        started = time.monotonic()
        case.run(lambda out: bf16_matmul(x, out))
        value, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 0 < value <= 5.0 - (time.monotonic() - started) + 0.05
        assert not fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_the_launch_deadline_still_works_under_a_later_previous_timer(make_case):
    results = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: pytest.fail("the previous timer fired early"))
    signal.setitimer(signal.ITIMER_REAL, 20.0)
    try:
        case = make_case(
            "hangs", m=16, n=16, k=32, settings=Settings(repeat=3, launch_timeout=0.3), record=results.append
        )
        x = case.inputs()
        with pytest.raises(LaunchError):
            case.run(lambda out: time.sleep(5) or bf16_matmul(x, out))
        assert results[0].launches[0].kinds == ["hung"]
        value, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 15 < value <= 20
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_calls_shorter_than_the_deadline_set_the_timer_once_and_none_is_cut_short(make_case, monkeypatch):
    """Each call's deadline runs from its own start: calls of 0.2 s under a 0.5 s deadline, 1.2 s
    in all, all finish, and the timer is set far fewer times than there are calls."""
    sets = []
    real = signal.setitimer
    monkeypatch.setattr(signal, "setitimer", lambda *args: sets.append(args[1]) or real(*args))
    results = []
    case = make_case("steady", m=16, n=16, k=32, settings=Settings(repeat=6, launch_timeout=0.5), record=results.append)
    x = case.inputs()
    case.run(lambda out: time.sleep(0.2) or bf16_matmul(x, out))
    assert [launch.kinds for launch in results[0].launches] == [[]] * 6
    armed = [seconds for seconds in sets if seconds > 0]
    assert 1 <= len(armed) <= 4, sets
