"""The example database: a stored value that is not a configuration of the space is dropped and
said, never an error of every later search; a database that cannot be written is said, naming
its folder."""

import json

import pytest

import pytest_gemmcheck as gc
from gemmcheck_dev import search_region_kernels as regions
from pytest_gemmcheck import SearchWarning
from pytest_gemmcheck.case.quant import quant_mode

AXES = dict(m=(1, 256, 1), n=64, k=(128, 512, 128))


def wide(case, x):
    """Wrong when m >= 100: found by the first few draws."""

    def launch(out):
        regions.gemm(x, out)
        if case.m >= 100:
            regions.spoil(out)

    return launch


def search(rootdir, **options):
    return gc.search("wide", wide, repeat=2, examples=20, rootdir=rootdir, **AXES, **options)


def stored_files(rootdir):
    """The files that hold a configuration (not Hypothesis's own list of keys)."""
    files = [path for path in (rootdir / ".gemmcheck" / "search").rglob("*") if path.is_file()]
    return [path for path in files if path.read_bytes().startswith(b"{")]


@pytest.mark.parametrize(
    "change",
    [{"k": 128.0}, {"m": True}, {"quant": 1}, "not json"],
    ids=["k float", "m bool", "quant number", "not json"],
)
def test_a_stored_value_outside_the_space_is_dropped_and_said(tmp_path, change):
    first = search(tmp_path)
    (stored,) = stored_files(tmp_path)
    assert json.loads(stored.read_text()) == first.minimal
    stored.write_text("{not json" if change == "not json" else json.dumps({**first.minimal, **change}))
    with pytest.warns(SearchWarning) as warned:
        second = search(tmp_path)
    assert second.minimal == first.minimal and second.replayed == 0
    (note,) = second.notes
    assert note.startswith(f"gemmcheck.search: dropped a stored example from {tmp_path / '.gemmcheck' / 'search'}: ")
    assert "\n" not in note and [str(w.message) for w in warned] == [note]
    assert note in second.summary()
    # gone from the store, and the smallest failing configuration kept again
    assert [json.loads(path.read_text()) for path in stored_files(tmp_path)] == [first.minimal]


@pytest.mark.parametrize("in_the_way", [".gemmcheck/search", ".gemmcheck"])
def test_a_database_that_cannot_be_written_is_said(tmp_path, in_the_way):
    (tmp_path / in_the_way).parent.mkdir(exist_ok=True)
    (tmp_path / in_the_way).write_text("a file where a folder should be")
    with pytest.warns(SearchWarning) as warned:
        found = search(tmp_path, db=tmp_path / "history.db")
    assert found.minimal is not None
    (note,) = found.notes
    assert note.startswith(
        f"gemmcheck.search: the example database {tmp_path / '.gemmcheck' / 'search'} cannot be written ("
    )
    assert note.endswith("): the smallest failing configuration is not kept for the next search")
    assert [str(w.message) for w in warned] == [note]
    assert (tmp_path / in_the_way).read_text() == "a file where a folder should be"


def test_a_search_that_stores_nothing_says_nothing(tmp_path, recwarn):
    found = gc.search(
        "clean", regions.correct, m=(64, 256, 64), n=64, k=128, repeat=1, rootdir=tmp_path, db=tmp_path / "history.db"
    )
    assert found.minimal is None and found.notes == []
    assert not [w for w in recwarn if issubclass(w.category, SearchWarning)]


def plain_product(x):
    mode = quant_mode(x.quant)
    return mode.dequantize_a(x, slice(None)) @ mode.dequantize_b(x).t()


def labelled(label):
    """References made in one place that compute the same, told apart by what they capture."""
    return lambda x: plain_product(x) if label else None


def test_references_made_in_one_place_keep_their_examples_apart(tmp_path):
    first = search(tmp_path, reference=labelled("a"))
    assert first.minimal is not None and stored_files(tmp_path)
    assert search(tmp_path, reference=labelled("b")).replayed == 0  # another reference: another key
    assert search(tmp_path, reference=labelled("a")).replayed >= 1
