"""What the collective suites share: a pytester directory holding examples/collective's kernels,
a session of a suite there, and its results read back from its --gemmcheck-json file."""

import json
from pathlib import Path

import pytest

KERNELS = Path(__file__).resolve().parents[2] / "examples" / "collective" / "collective_kernels.py"
# Each rank starts pytest and torch (4 ranks on 2 loaded cores: seconds apart): a session of a
# few tests of ranks takes minutes at worst
SESSION_TIMEOUT_S = 900


class RankSession:
    def __init__(self, pytester):
        self.pytester = pytester
        pytester.path.joinpath("collective_kernels.py").write_text(KERNELS.read_text())

    def run(self, source: str, *args: str):
        """The suite ``source`` in a pytest session of its own: pytest's result, and the session's
        results by test name."""
        self.pytester.makepyfile(test_suite=source)
        out = self.pytester.path / "results.json"
        result = self.pytester.runpytest_subprocess(
            "-p",
            "no:cacheprovider",
            "--gemmcheck-no-record",
            f"--gemmcheck-json={out}",
            *args,
            timeout=SESSION_TIMEOUT_S,
        )
        found = json.loads(out.read_text())["results"] if out.exists() else []
        return result, {entry["nodeid"].split("::")[-1]: entry for entry in found}

    @staticmethod
    def bad(entry) -> dict[tuple[int, int], list[str]]:
        """A result's bad launches: (launch, rank) -> kinds."""
        return {(launch["index"], launch["rank"]): launch["kinds"] for launch in entry["launches"] if launch["kinds"]}


@pytest.fixture
def ranks(pytester):
    return RankSession(pytester)
