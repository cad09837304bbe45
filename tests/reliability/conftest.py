"""What the reliability tests share, as fixtures: small suites (``write_suite``), and readers of
what a session leaves behind (``leftovers``: its summary line, its fallback file, the
database's own check)."""

import json
import re
import shutil
import sqlite3
import textwrap
from pathlib import Path

import pytest

SUITES = {
    # three tests of one case; the middle one's seed fits no 64-bit column: the row that cannot be stored
    "seeds": """
        import pytest
        from kernels import bf16_matmul

        @pytest.mark.parametrize("seed", [1, 2 ** 64, 3])
        def test_seed(gemmcheck, seed):
            case = gemmcheck.case("seeded", m=16, n=16, k=32, seed=seed % 2 ** 63)
            case.seed = seed  # past the case's own check (seeds < 2**63): a row no column holds
            x = case.inputs()
            case.run(lambda out: bf16_matmul(x, out))
    """,
    # test_2 renames the launch table of $SABOTAGE_DB away once its case is judged (its result
    # cannot be written), test_3 renames it back before its own: one result goes to the fallback
    # file, the others are recorded
    "sabotage": """
        import os
        from kernels import bf16_matmul
        from sqlalchemy import create_engine, text

        def run(gemmcheck, kernel):
            case = gemmcheck.case(kernel, m=16, n=16, k=32)
            x = case.inputs()
            case.run(lambda out: bf16_matmul(x, out))

        def rename(old, new):
            engine = create_engine(os.environ["SABOTAGE_DB"])
            with engine.begin() as connection:
                connection.execute(text(f"ALTER TABLE {old} RENAME TO {new}"))
            engine.dispose()

        def test_1(gemmcheck):
            run(gemmcheck, "kept")

        def test_2(gemmcheck):
            run(gemmcheck, "saved")
            rename("launch", "launch_away")

        def test_3(gemmcheck):
            rename("launch_away", "launch")
            run(gemmcheck, "after")
    """,
}


@pytest.fixture
def write_suite(examples_dir):
    """``write_suite(folder, name, ...)``: the example CPU kernels and the named suites
    (test_NAME.py) in ``folder``."""

    def write(folder: Path, *names: str) -> Path:
        shutil.copy(examples_dir / "cpu" / "kernels.py", folder / "kernels.py")
        for name in names:
            (folder / f"test_{name}.py").write_text(textwrap.dedent(SUITES[name]))
        return folder

    return write


class Leftovers:
    """What a session leaves behind, read back."""

    @staticmethod
    def lines(output_lines) -> list[str]:
        """The summary's lines about recording."""
        return [line for line in output_lines if line.startswith("gemmcheck:")]

    @staticmethod
    def saved_file(line: str) -> Path:
        """The fallback file a summary line names."""
        found = re.search(r"saved to (\S+)", line)
        assert found, line
        return Path(found.group(1))

    @staticmethod
    def entries(path: Path) -> list[dict]:
        """The results a fallback file holds, each with its uid and reason."""
        return [entry for entry in map(json.loads, path.read_text().splitlines()) if "result" in entry]

    @staticmethod
    def rows(path: Path, table: str) -> int:
        """Rows of a table of a SQLite history that a session may be writing (0 while there is none)."""
        try:
            with sqlite3.connect(path, timeout=1) as connection:
                return connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        except sqlite3.OperationalError:  # not made yet, or busy
            return 0

    @staticmethod
    def integrity(path: Path) -> str:
        with sqlite3.connect(path) as connection:
            return connection.execute("PRAGMA integrity_check").fetchone()[0]


@pytest.fixture
def leftovers() -> Leftovers:
    return Leftovers()
