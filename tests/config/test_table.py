"""config/table.py: the option table's parsers say what is wrong with a value as it was given,
and refuse what no later step could use (a tag no index holds, a sanitized shape past any grid)."""

import pytest

from pytest_gemmcheck.config.table import MAX_TAG, Settings, apply_marker, parse_sanitize, parse_shape, parse_tag

TOOLS = "racecheck, memcheck, synccheck, initcheck"


@pytest.mark.parametrize(
    "value, problem",
    [
        ("none,racecheck", "'none' turns the sanitizer off, so it stands alone"),
        ("racecheck, NONE", "'none' turns the sanitizer off, so it stands alone"),
        (",", "no tool name"),
        ("", "no tool name"),
        ("racecheck,", "an empty name in the list"),
        ("racecheck,,memcheck", "an empty name in the list"),
        ("racechek", "'racechek' is no tool"),
        ("memcheck,foo,bar", "'foo', 'bar' are no tools"),
        ([], "no tool name"),
    ],
)
def test_a_sanitize_value_that_names_no_tools_says_what_is_wrong(value, problem):
    """'none' is one of the words it takes, and the message lists it; an empty value or an empty
    name is said as such, not as "got '', ''"."""
    with pytest.raises(ValueError) as refused:
        parse_sanitize(value)
    assert str(refused.value) == f"expected none (off) or a comma list of {TOOLS}, got {value!r}: {problem}"


@pytest.mark.parametrize(
    "value, tools",
    [
        ("none", ()),
        (" NONE ", ()),
        (["none"], ()),
        ("racecheck", ("racecheck",)),
        ("racecheck,memcheck,synccheck,initcheck", ("racecheck", "memcheck", "synccheck", "initcheck")),
        (" MemCheck , racecheck ", ("memcheck", "racecheck")),
        ("racecheck,racecheck,memcheck", ("racecheck", "memcheck")),
        (["initcheck", "synccheck"], ("initcheck", "synccheck")),
    ],
)
def test_sanitize_tools_are_parsed_in_the_order_given_each_once(value, tools):
    assert parse_sanitize(value) == tools


@pytest.mark.parametrize("value", [["racecheck", 3], None, 7])
def test_a_sanitize_value_that_is_no_text_is_refused(value):
    with pytest.raises(ValueError, match=rf"^expected none \(off\) or a comma list of {TOOLS}, got "):
        parse_sanitize(value)


@pytest.mark.parametrize("tag", ["x" * (MAX_TAG + 1), "x" * 100_000])
def test_a_tag_longer_than_a_label_is_refused(tag):
    with pytest.raises(ValueError, match=rf"^expected a label of at most {MAX_TAG} characters, got {len(tag):,}: "):
        parse_tag(tag)


@pytest.mark.parametrize("tag", ["a\x00b", "pr\n1", "\x1b[31mred", "main\u202eniam", "zero\u200bwidth", "a\u2028b"])
def test_a_tag_with_a_character_a_terminal_would_not_show_as_itself_is_refused(tag):
    with pytest.raises(
        ValueError,
        match=r"^expected a label of printable characters, got .*: U\+[0-9A-F]{4} is a "
        r"control, bidi or other invisible character$",
    ):
        parse_tag(tag)


@pytest.mark.parametrize(
    "tag, kept",
    [("pr-123", "pr-123"), ("  main  ", "main"), ("", None), ("x" * MAX_TAG, "x" * MAX_TAG), ("ветка µ", "ветка µ")],
)
def test_tags_it_takes(tag, kept):
    assert parse_tag(tag) == kept


@pytest.mark.parametrize("shape", [(64, 64, 2**70), (2**31, 1, 1), (-1, 64, 64), (0, 64, 64)])
def test_a_sanitized_shape_past_a_32_bit_grid_or_below_1_is_refused(shape):
    with pytest.raises(ValueError, match=r"expected \(m, n, k\) of whole numbers from 1 to 2\*\*31 - 1"):
        parse_shape(shape)
    with pytest.raises(ValueError, match=r"^@pytest.mark.gemmcheck\(sanitize_shape=...\): expected"):
        apply_marker(Settings(), {"sanitize_shape": shape})
    assert parse_shape((2**31 - 1, 1, 1)) == (2**31 - 1, 1, 1)
