"""A database that drops the session's connections mid-run (a server restarted, a backend
terminated by an operator) costs no test and no result: every read and write is done again once
on a fresh connection, what still fails goes to the fallback file, and a baseline that cannot be
read is judged against goldens, else clean, with a line that says so."""

import textwrap
import threading
import time

import pytest
from sqlalchemy import create_engine, text

from pytest_gemmcheck.history.engine import on_fresh_connection

CASES = 40
SUITE = textwrap.dedent(f"""
    import pytest


    @pytest.mark.parametrize("m", range(16, 16 + 8 * {CASES}, 8))
    def test_case(gemmcheck, m):
        case = gemmcheck.case("dropped", m=m, n=16, k=32)
        x = case.inputs()
        case.run(lambda out: out.copy_(x.a.float() @ x.b.float().T))
""")


def _terminator(url: str, stop: threading.Event, every_s: float) -> threading.Thread:
    """A thread that, once the session has written its run row (mid-session), terminates every
    other backend of ``url``'s database every ``every_s``."""
    engine = create_engine(url, isolation_level="AUTOCOMMIT")

    def started(connection) -> bool:
        try:
            return bool(connection.execute(text("SELECT count(*) FROM run")).scalar())
        except Exception:  # no schema yet
            return False

    def run():
        with engine.connect() as connection:
            while not stop.is_set() and not started(connection):
                stop.wait(0.05)
            while not stop.is_set():
                connection.execute(
                    text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    )
                )
                stop.wait(every_s)
        engine.dispose()

    return threading.Thread(target=run, daemon=True)


def test_terminated_backends_fail_no_test_and_lose_no_result(pytester, postgres_url):
    pytester.makepyfile(test_dropped=SUITE)
    stop = threading.Event()
    terminator = _terminator(postgres_url, stop, 0.3)
    terminator.start()
    try:
        result = pytester.runpytest_subprocess(
            f"--gemmcheck-db={postgres_url}", "--gemmcheck-repeat=3", "-p", "no:cacheprovider", timeout=900
        )
    finally:
        stop.set()
        terminator.join()
    result.assert_outcomes(passed=CASES)
    engine = create_engine(postgres_url)
    with engine.connect() as connection:
        stored = connection.execute(text("SELECT count(*) FROM result")).scalar()
        launches = connection.execute(text("SELECT count(*) FROM launch")).scalar()
    engine.dispose()
    fallback = list((pytester.path / ".gemmcheck").glob("unrecorded-*.jsonl"))
    kept = sum(len([line for line in path.read_text().splitlines() if '"result"' in line]) for path in fallback)
    assert stored + kept >= CASES, (stored, kept, result.stdout.str()[-2000:])
    assert launches <= 3 * stored  # nothing stored twice


def test_a_dropped_connection_is_retried_once_on_a_fresh_one(postgres_url):
    from sqlalchemy.exc import OperationalError

    engine = create_engine(postgres_url, pool_pre_ping=True)
    calls = []

    @on_fresh_connection
    def read():
        with engine.connect() as connection:
            calls.append(connection.execute(text("SELECT pg_backend_pid()")).scalar())
            if len(calls) == 1:  # the backend goes away under the first attempt
                with create_engine(postgres_url, isolation_level="AUTOCOMMIT").connect() as admin:
                    admin.execute(text(f"SELECT pg_terminate_backend({calls[0]})"))
                time.sleep(0.2)
                connection.execute(text("SELECT 1"))
            return calls[-1]

    assert read() != calls[0] and len(calls) == 2

    # a fault that is not a dropped connection is not hidden
    @on_fresh_connection
    def wrong():
        with engine.connect() as connection:
            connection.execute(text("SELECT * FROM no_such_table"))

    with pytest.raises(Exception, match="no_such_table"):
        wrong()
    engine.dispose()
    assert OperationalError  # the kind a dropped connection raises
