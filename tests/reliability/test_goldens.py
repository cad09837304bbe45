"""Golden files that must not collide, be lost, or crash the reader: names that escape to the
same file, another kernel's file in the way, malformed contents, kernel names too long for a
file name."""

import json
import shutil
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_gemmcheck.judging.goldens import GoldenError, GoldenStore, file_name
from pytest_gemmcheck.records.result import CaseResult, LaunchRecord

GOOD_CASE = {"key": "k1", "scope": "arch:cpu", "launches": 12, "bad_launches": 3}  # result_of's case


def result_of(kernel, *, bad=3, launches=12, key="k1"):
    records = [
        LaunchRecord(
            index=i + 1, pid=1, host="h", device="cpu", kinds=["wrong"] if i < bad else [], wrong=5 if i < bad else 0
        )
        for i in range(launches)
    ]
    return CaseResult(
        key=key,
        kernel=kernel,
        m=16,
        n=16,
        k=32,
        quant="bf16",
        tile=None,
        out_dtype="bfloat16",
        params={},
        fp8=None,
        seed=0,
        device="cpu",
        deterministic=True,
        rtol=0.05,
        floor=1.0,
        launches=records,
        stack={"gpu_arch": None},
    )


def accepted(directory, kernel, **kwargs):
    store = GoldenStore(directory)
    store.accept(result_of(kernel, **kwargs), "arch", "accepted")
    return store.write(kernel)


# --- names ---------------------------------------------------------------------------------


def test_kernels_that_escaped_to_one_name_get_files_of_their_own(tmp_path):
    kernels = ["gemm/v1", "gemm:v1", "gemm v1", "gemm_v1"]
    paths = [accepted(tmp_path, kernel, bad=index) for index, kernel in enumerate(kernels)]
    assert len(set(paths)) == 4
    for index, kernel in enumerate(kernels):  # each still finds its own, none was overwritten
        assert GoldenStore(tmp_path).lookup(result_of(kernel)).evidence.bad == index
        assert json.loads(file_name_path(tmp_path, kernel).read_text())["kernel"] == kernel


def file_name_path(directory, kernel):
    return directory / file_name(kernel)


@pytest.mark.parametrize("kernel", ["fused_gemm", "fused_gemm_scatter", "gemm-v1.2", "Triton_FP8"])
def test_plain_kernel_names_keep_their_file_names(kernel):
    assert file_name(kernel) == f"{kernel}.json"


def test_another_kernels_file_is_never_overwritten(tmp_path):
    path = accepted(tmp_path, "gemm_v1")
    theirs = json.loads(path.read_text())
    theirs["kernel"] = "GEMM_V1"  # as a case-insensitive file system would give GEMM_V1 the same file
    path.write_text(json.dumps(theirs))
    store = GoldenStore(tmp_path)
    assert store.lookup(result_of("gemm_v1")) is None  # their entries are not this kernel's goldens
    store.accept(result_of("gemm_v1"), "arch", "accepted")
    with pytest.raises(GoldenError, match=r"gemm_v1\.json holds the goldens of kernel 'GEMM_V1', not 'gemm_v1'"):
        store.write("gemm_v1")
    assert json.loads(path.read_text()) == theirs


def test_a_5000_character_kernel_name_is_looked_up_and_written(tmp_path):
    kernel = "gemm_" + "x" * 4995
    assert GoldenStore(tmp_path).lookup(result_of(kernel)) is None
    path = accepted(tmp_path, kernel, bad=2)
    assert len(path.name) <= 100
    assert GoldenStore(tmp_path).lookup(result_of(kernel)).evidence.bad == 2


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=300), min_size=2, max_size=6, unique=True))
def test_file_names_are_distinct_safe_and_short(kernels):
    names = [file_name(kernel) for kernel in kernels]
    assert len(set(names)) == len(names)
    for name in names:
        assert name.endswith(".json") and len(name.encode()) <= 255
        assert "/" not in name and "\\" not in name and "\0" not in name and not name.startswith(".")


# --- malformed files -------------------------------------------------------------------------


def case_with(**changes):
    entry = dict(GOOD_CASE, **changes)
    return {"kernel": "fused", "cases": [{k: v for k, v in entry.items() if v is not ...}]}


@pytest.mark.parametrize(
    "content,field",
    [
        ([], "expected a JSON object"),
        ({"cases": [1, 2]}, "cases[0]: expected an object"),
        ({"format": "1"}, "format: expected a whole number"),
        ({"format": 2, "cases": []}, "has format 2, newer than"),
        ({"cases": {"key": "k1"}}, "cases: expected a list"),
        ({"kernel": 7, "cases": []}, "kernel: expected a string"),
        (case_with(launches=-1), "cases[0].launches: expected a whole number >= 0"),
        (case_with(bad_launches=-2), "cases[0].bad_launches: expected a whole number from 0 to launches (12)"),
        (case_with(bad_launches=13), "cases[0].bad_launches: expected a whole number from 0 to launches (12), got 13"),
        (case_with(launches="12"), 'cases[0].launches: expected a whole number >= 0, got "12"'),
        (case_with(launches=12.5), "cases[0].launches: expected a whole number >= 0, got 12.5"),
        (case_with(launches=True), "cases[0].launches: expected a whole number >= 0, got true"),
        (case_with(key=...), "cases[0].key: missing"),
        (case_with(launches=...), "cases[0].launches: missing"),
        (case_with(bad_launches=...), "cases[0].bad_launches: missing"),
        (case_with(key=""), "cases[0].key: expected a non-empty string"),
        (case_with(scope="arch"), "cases[0].scope: expected 'any', 'arch:ARCH' or 'stack:FINGERPRINT'"),
        (case_with(per_process=["3/12", "x"]), "cases[0].per_process[1]: expected 'bad/launches'"),
        (
            case_with(per_process=["2/6", "0/6"]),
            "cases[0].per_process: adds up to 2/12, not bad_launches/launches 3/12",
        ),
        (case_with(per_process=["7/6", "0/6"]), "cases[0].per_process[0]: expected 'bad/launches'"),
        (case_with(gpus=-1), "cases[0].gpus: expected a whole number >= 0"),
        (case_with(worst_wrong=None), "cases[0].worst_wrong: expected a whole number >= 0"),
        (case_with(kinds="wrong"), "cases[0].kinds: expected a list of strings"),
        (case_with(case=[]), "cases[0].case: expected an object"),
        (case_with(note=3), "cases[0].note: expected a string"),
        ({"cases": [GOOD_CASE, GOOD_CASE]}, "cases[1]: the same key and scope as cases[0]"),
    ],
)
def test_malformed_golden_files_are_one_line_naming_the_file_and_the_field(tmp_path, content, field):
    path = tmp_path / "fused.json"
    path.write_text(json.dumps(content))
    with pytest.raises(GoldenError) as raised:
        GoldenStore(tmp_path).lookup(result_of("fused"))
    message = str(raised.value)
    assert message.startswith(f"golden file {path}: ") and field in message and "\n" not in message


@pytest.mark.parametrize(
    "text,words",
    [
        ("{", "not valid JSON"),
        ("[" * 100_000, "not valid JSON"),
        (b"\xff\xfe{}", "not UTF-8 text"),
    ],
)
def test_unreadable_golden_files_are_one_line(tmp_path, text, words):
    path = tmp_path / "fused.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(GoldenError, match=f"golden file .*fused.json: {words}"):
        GoldenStore(tmp_path).lookup(result_of("fused"))


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 20) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
FIELDS = st.sampled_from(
    [
        "key",
        "scope",
        "launches",
        "bad_launches",
        "per_process",
        "gpus",
        "worst_wrong",
        "worst_wrong_tiles",
        "kinds",
        "case",
        "note",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    top=st.dictionaries(st.sampled_from(["format", "kernel", "cases"]), JSON, max_size=3) | JSON,
    entry=st.dictionaries(FIELDS, JSON | st.integers(0, 12), max_size=11),
)
def test_any_golden_content_reads_or_raises_golden_error(tmp_path_factory, top, entry):
    directory = tmp_path_factory.mktemp("goldens")
    for content in (top, {"kernel": "fused", "cases": [dict(GOOD_CASE, **entry)]}):
        (directory / "fused.json").write_text(json.dumps(content))
        try:
            GoldenStore(directory).lookup(result_of("fused"))
        except GoldenError as exc:
            assert str(exc).startswith("golden file ") and "\n" not in str(exc)


# --- through a session -------------------------------------------------------------------------


def test_a_malformed_golden_is_a_test_error_naming_the_file_and_field(pytester, examples_dir):
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makepyfile(
        test_kernel=textwrap.dedent("""
        from kernels import bf16_matmul

        def test_kernel(gemmcheck):
            case = gemmcheck.case("fused", m=16, n=16, k=32)
            x = case.inputs()
            case.run(lambda out: bf16_matmul(x, out), repeat=2)
    """)
    )
    (pytester.path / "goldens").mkdir()
    (pytester.path / "goldens" / "fused.json").write_text('{"cases": [1, 2]}')
    result = pytester.runpytest("--gemmcheck-no-record", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*golden file */goldens/fused.json: cases[[]0[]]: expected an object, got 1*"])
    assert "AttributeError" not in result.stdout.str() and "TypeError" not in result.stdout.str()


def test_a_reviewers_note_stays_when_the_same_evidence_is_accepted_again(tmp_path):
    store = GoldenStore(tmp_path)
    entry = store.accept(result_of("gemm"), "arch", "accepted at abc")
    entry.note = "known-bad on purpose: the test double corrupts launches 2, 5 and 9"
    store.write("gemm")
    again = GoldenStore(tmp_path)
    assert again.accept(result_of("gemm"), "arch", "accepted at def").note.startswith("known-bad on purpose")
    assert again.accept(result_of("gemm", bad=4), "arch", "accepted at def").note == "accepted at def"  # new evidence


# --- what is not a golden file ---------------------------------------------------------------


@pytest.mark.parametrize("make", ["dev-zero", "fifo", "folder", "large"])
def test_a_golden_that_is_no_plain_file_is_one_line_and_never_hangs(tmp_path, make):
    """A link to /dev/zero or a FIFO would block a read forever, a huge file take all memory."""
    import os

    from pytest_gemmcheck.judging import goldens

    path = tmp_path / file_name("gemm")
    if make == "dev-zero":
        path.symlink_to("/dev/zero")
    elif make == "fifo":
        os.mkfifo(path)
    elif make == "folder":
        path.mkdir()
    else:
        with path.open("wb") as handle:  # sparse: its size, not its bytes
            handle.truncate(goldens.MAX_GOLDEN_BYTES + 1)
    with pytest.raises(GoldenError) as raised:
        GoldenStore(tmp_path).lookup(result_of("gemm"))
    message = str(raised.value)
    assert "\n" not in message and str(path) in message
    assert ("not a regular file" in message) if make != "large" else ("more than a golden file holds" in message)
