import os
import sys
from pathlib import Path

import pytest

# the same for modules whose import registers global state (a second import warns)
import sqlalchemy.dialects.postgresql  # noqa: F401,E402
import sqlalchemy.dialects.sqlite  # noqa: F401,E402

# Imported before any in-process pytester run: pytester restores sys.modules after each run,
# and torch's C extension cannot be imported a second time in one process.
import torch  # noqa: F401

import pytest_gemmcheck.history.engine  # noqa: F401,E402

try:
    import psycopg  # noqa: F401
except ImportError:  # PostgreSQL tests skip without the driver
    pass
import pytest_gemmcheck.history.store  # noqa: F401,E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
# the example kernels double as independent implementations for the plugin's own tests
sys.path.insert(0, str(EXAMPLES / "cpu"))


@pytest.fixture
def make_case():
    """Build a Case outside a pytest session: what the fixture does, minus the session."""
    from pytest_gemmcheck.case.case import Case, CaseContext
    from pytest_gemmcheck.config.table import Settings

    def make(kernel="kern", *, repeat=12, settings=None, record=None, **kwargs):
        context = CaseContext(settings or Settings(repeat=repeat))
        if record is not None:
            context.record = record
        return Case(context, kernel, **kwargs)

    return make


@pytest.fixture
def fused_anywhere(monkeypatch):
    """The fused check for the test: compiled on a GPU; off one, in Triton's interpreter
    (TRITON_INTERPRET=1, which on a GPU machine would send kernels first launched in the test
    to the interpreter with GPU tensors)."""
    if not torch.cuda.is_available():
        monkeypatch.setenv("TRITON_INTERPRET", "1")


@pytest.fixture
def examples_dir():
    return EXAMPLES


# --- databases: every history test runs on SQLite and on a real PostgreSQL server ---------

PG_ADMIN_URL = os.environ.get("GEMMCHECK_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def _postgres_or_skip():
    from sqlalchemy import create_engine, text

    try:
        engine = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    except ImportError as exc:  # no PostgreSQL driver here (the [postgresql] extra)
        if os.environ.get("GEMMCHECK_REQUIRE_PG"):
            pytest.fail(f"PostgreSQL driver missing: {exc}")
        pytest.skip(f"no PostgreSQL driver: {exc}")
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except Exception as exc:
        engine.dispose()
        message = f"PostgreSQL at {PG_ADMIN_URL} is not reachable: {str(exc).splitlines()[0]}"
        if os.environ.get("GEMMCHECK_REQUIRE_PG"):
            pytest.fail(message)
        pytest.skip(message)
    return engine


@pytest.fixture
def postgres_url():
    """A fresh PostgreSQL database of its own, dropped afterwards."""
    import uuid

    from sqlalchemy import text
    from sqlalchemy.engine import make_url

    admin = _postgres_or_skip()
    name = f"gemmcheck_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    """A database URL on each backend, at the current schema."""
    from pytest_gemmcheck.cli import main

    if request.param == "sqlite":
        url = f"sqlite+pysqlite:///{tmp_path / 'history.db'}"
    else:
        url = request.getfixturevalue("postgres_url")

    assert main(["--db", url, "db", "upgrade"]) == 0
    return url


@pytest.fixture
def history(db_url):
    """Read access to the database behind ``db_url``."""
    from sqlalchemy import create_engine

    engine = create_engine(db_url)
    yield engine
    engine.dispose()
