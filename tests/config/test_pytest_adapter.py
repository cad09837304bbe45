"""config/pytest_adapter.py with the session's collection check: a bad marker value, or a tag
no run can be recorded under, is a usage error (exit status 4) in one line that names the
marker key or the option, before any test runs."""

import textwrap

import pytest


@pytest.mark.parametrize(
    "marker, named",
    [
        (
            "sanitize_shape=(-1, 64, 64)",
            "@pytest.mark.gemmcheck(sanitize_shape=...): expected (m, n, k) of whole numbers from 1 to 2**31 - 1, "
            "got (-1, 64, 64)",
        ),
        ("sanitize_shape=(64, 64, 2 ** 70)", "@pytest.mark.gemmcheck(sanitize_shape=...): expected (m, n, k)"),
        (
            "search_examples=0",
            "@pytest.mark.gemmcheck(search_examples=...): expected a whole number of examples >= 1, got 0",
        ),
        ("repeat='lots'", "@pytest.mark.gemmcheck(repeat=...): expected a whole number of launches"),
        ("repet=3", "@pytest.mark.gemmcheck got unknown argument(s) repet"),
    ],
)
def test_a_bad_marker_value_is_a_usage_error_naming_the_test_and_the_key(pytester, marker, named):
    pytester.makepyfile(
        textwrap.dedent(f"""
        import pytest

        def test_first():
            pass

        @pytest.mark.gemmcheck({marker})
        def test_marked(gemmcheck):
            pass
    """)
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output and "passed" not in output  # before any test ran
    [line] = [line for line in result.stderr.lines if "@pytest.mark.gemmcheck" in line]
    assert line.startswith("ERROR: ") and f".py::test_marked: {named}" in line, line


def test_under_xdist_a_bad_marker_value_fails_its_test_in_one_line(pytester):
    """An xdist worker cannot stop its controller: the test's setup fails with the same line."""
    pytest.importorskip("xdist")
    pytester.makepyfile(
        textwrap.dedent("""
        import pytest

        @pytest.mark.gemmcheck(search_examples=0)
        def test_marked(gemmcheck):
            pass

        def test_other():
            pass
    """)
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-n", "1", "--gemmcheck-no-record")
    result.assert_outcomes(passed=1, errors=1)
    output = result.stdout.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output
    result.stdout.fnmatch_lines(
        ["*::test_marked: @pytest.mark.gemmcheck(search_examples=...): expected a whole number of examples >= 1, got 0"]
    )


@pytest.mark.parametrize(
    "args, ini, named",
    [
        (
            ["--gemmcheck-tag=" + "x" * 100_000],
            "",
            "argument --gemmcheck-tag: expected a label of at most 512 characters, got 100,000: 'xxxx",
        ),
        (
            ["--gemmcheck-tag=pr\x01123"],
            "",
            "argument --gemmcheck-tag: expected a label of printable characters, got 'pr\\x01123': U+0001 is a control",
        ),
        (
            [],
            "gemmcheck_tag = main\u202eniam",
            "ini option gemmcheck_tag (the default of --gemmcheck-tag): expected a label of printable characters",
        ),
    ],
)
def test_a_tag_no_run_can_be_recorded_under_is_a_usage_error_naming_it(pytester, args, ini, named):
    """Before, a 100,000-character tag (or one with a NUL) was refused by the database at the
    first case, as '--gemmcheck-db: cannot write to ...'."""
    pytester.makepyfile("def test_nothing(gemmcheck): pass")
    if ini:
        pytester.makeini(f"[pytest]\n{ini}\n")
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert any(named in line for line in result.stderr.lines), result.stderr.str()[:2000]
    assert "--gemmcheck-db" not in result.stdout.str() + result.stderr.str()
