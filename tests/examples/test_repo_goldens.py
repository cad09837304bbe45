"""The repo's own goldens/ for the example suites, used as a user's would be: examples/cpu and a
copy of goldens/ in a pytester directory that is the rootdir. The correct kernels are clean,
the fault injectors known-bad; a change to an example's behaviour is a regression until its
golden is accepted again."""

import json
import shutil
from pathlib import Path

import pytest

from pytest_gemmcheck.judging.goldens import GoldenStore

ROOT = Path(__file__).resolve().parents[2]
GOLDENS = ROOT / "goldens"
FAULTS = ["fault_tile", "fault_row", "fault_unwritten", "fault_subtle"]
NO_RECORD = ("-p", "no:cacheprovider", "--gemmcheck-no-record")


@pytest.fixture
def repo(pytester, examples_dir):
    """examples/cpu and the repo's goldens/, under a rootdir of their own."""
    shutil.copytree(examples_dir / "cpu", pytester.path / "cpu")
    shutil.copytree(GOLDENS, pytester.path / "goldens")
    pytester.makeini("[pytest]\n")  # the rootdir, whose goldens/ are the default
    return pytester


def _golden(repo, kernel, **case):
    """The entry of ``kernel``'s golden file whose case has these fields."""
    data = json.loads((repo.path / "goldens" / f"{kernel}.json").read_text())
    found = [entry for entry in data["cases"] if all(entry["case"][name] == value for name, value in case.items())]
    assert len(found) == 1, found
    return found[0]


def test_the_goldens_are_stable_reviewable_text(tmp_path):
    """Each file as the store writes it (sorted, no timestamps, no paths), every entry with a
    note, known-bad exactly for the fault injectors, all in the CPU's scope."""
    files = sorted(GOLDENS.glob("*.json"))
    assert {path.stem for path in files} >= {*FAULTS, "tiled_gemm", "tiled_gemm_fp64", "torch_matmul"}
    store, again = GoldenStore(GOLDENS), GoldenStore(tmp_path)
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert str(ROOT) not in text and "accepted at" not in text, path
        entries = store.entries(path.stem)
        assert entries, path
        for entry in entries.values():
            again.put(path.stem, entry)
            assert entry.scope == "arch:cpu" and entry.evidence.launches == 12, (path, entry)
            assert (entry.evidence.bad > 0) == (path.stem in FAULTS), (path, entry)
            assert entry.note.startswith("known-bad" if path.stem in FAULTS else "clean"), (path, entry.note)
        assert again.write(path.stem).read_text(encoding="utf-8") == text, f"{path} is not as the store writes it"


def test_the_example_suites_pass_and_the_faults_are_known_bad(repo):
    result = repo.runpytest("cpu", *NO_RECORD)
    result.assert_outcomes(passed=20)
    result.stdout.fnmatch_lines(
        [
            "*- gemmcheck -*",
            "PASS * tiled_gemm ptpc 256x384x512 tile 64x64: 0/12 launches bad",
            "KNOWN-BAD * fault_tile ptpc 256x256x512 tile 64x64: 3/12 launches bad,*",
            "    vs 3/12 (golden): golden*",
            "    launches 2, 5, 9; *",
        ]
    )
    lines = [line for line in result.outlines if line.startswith(("PASS", "KNOWN-BAD", "REGRESSION", "IMPROVED"))]
    assert sorted(line.split()[1] for line in lines if line.startswith("KNOWN-BAD")) == sorted(FAULTS)
    assert sum(line.startswith("PASS") for line in lines) == 16 and len(lines) == 20, lines


@pytest.mark.parametrize("edit", ["fault_injector_corrupts_every_launch", "correct_kernel_corrupts_a_launch"])
def test_a_changed_kernel_regresses_until_its_golden_is_accepted_again(repo, edit):
    if edit == "fault_injector_corrupts_every_launch":
        path, test, kernel = repo.path / "cpu" / "test_fault_injection.py", "test_corrupted_tile", "fault_tile"
        case = {}
        old, new = '"tile", {2, 5, 9}', '"tile", set(range(1, 13))'
        label, bad = "fault_tile ptpc 256x256x512 tile 64x64", 12
    else:
        path, test, kernel = repo.path / "cpu" / "test_cpu_kernels.py", "test_fp32_output", "tiled_gemm"
        case = {"m": 128, "out_dtype": "float32"}
        old = "case.run(lambda out: tiled_gemm(x, out))"
        new = 'case.run(FaultInjector(lambda out: tiled_gemm(x, out), "tile", {4}, at=(64, 64)))'
        label, bad = "tiled_gemm ptpc 128x128x256 tile 64x64", 1
    source = path.read_text()
    assert source.count(old) == 1
    path.write_text("from kernels import FaultInjector\n" + source.replace(old, new))
    golden_file = repo.path / "goldens" / f"{kernel}.json"
    before = json.loads(golden_file.read_text())

    result = repo.runpytest("cpu", "-k", test, *NO_RECORD)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"REGRESSION {label}: {bad}/12 launches bad*"])
    # a failing run writes nothing
    assert golden_file.read_text() == json.dumps(before, indent=2, sort_keys=True) + "\n"

    result = repo.runpytest("cpu", "-k", test, "--gemmcheck-accept", *NO_RECORD)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"ACCEPTED   {label}: {bad}/12*", f"gemmcheck: accepted as goldens: {golden_file}"])
    assert _golden(repo, kernel, **case)["bad_launches"] == bad
    after = json.loads(golden_file.read_text())
    changed = [entry for entry in after["cases"] if entry not in before["cases"]]
    # the kernel's other cases kept as they were
    assert len(changed) == 1 and len(after["cases"]) == len(before["cases"])

    result = repo.runpytest("cpu", "-k", test, *NO_RECORD)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"KNOWN-BAD * {label}: {bad}/12 launches bad*", f"    vs {bad}/12 (golden): golden*"])
