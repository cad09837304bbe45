"""The tool list a user writes (--gemmcheck-sanitize): parsed, "none" for no tool, or refused naming the words that are no tool."""

import pytest

from pytest_gemmcheck.config.table import parse_sanitize as parse_tools


@pytest.mark.parametrize("value, tools", [
    ("racecheck", ("racecheck",)),
    ("racecheck,memcheck,synccheck,initcheck", ("racecheck", "memcheck", "synccheck", "initcheck")),
    (" MemCheck , racecheck ", ("memcheck", "racecheck")),
    ("racecheck,racecheck,memcheck", ("racecheck", "memcheck")),
    (["initcheck", "synccheck"], ("initcheck", "synccheck")),
])
def test_tools_are_parsed_in_the_order_given(value, tools):
    assert parse_tools(value) == tools


@pytest.mark.parametrize("value, named", [
    ("racecheck,helgrind", "'helgrind'"),
    ("race,mem", "'race', 'mem'"),
    ("racecheck,,memcheck", "''"),
    ("", "''"),
    ([], "nothing"),
])
def test_bad_words_are_named(value, named):
    with pytest.raises(ValueError) as raised:
        parse_tools(value)
    assert str(raised.value) == f"expected a comma list of racecheck, memcheck, synccheck, initcheck, got {named}"


@pytest.mark.parametrize("value", [["racecheck", 3], None, 7])
def test_other_things_are_refused(value):
    with pytest.raises(ValueError, match=r"^expected tool names \(racecheck, memcheck, synccheck, initcheck\), got "):
        parse_tools(value)
