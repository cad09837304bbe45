"""reporting/tables.py: CSV is data, as RFC 4180 and Python's csv module write it: every value as
it is (control characters too) in a properly quoted field, each record ended by CRLF."""

import csv
import io

from pytest_gemmcheck.reporting.tables import Table

VALUES = ["a,b", 'say "hi"', "two\nlines", "lone\rcarriage", "bell\x07 nul\x00 esc\x1b[31m", "rtl\u202eltr", "plain"]


def test_csv_keeps_every_value_as_it_is_in_quoted_fields():
    """Before, control characters were written as the text '\\x0a' (what the terminal form shows),
    and a lone CR went unquoted between LF-ended records, splitting its record for a reader."""
    table = Table(
        ["n", "value"],
        [[str(i), value] for i, value in enumerate(VALUES)],
        records=[{"n": i, "value": value} for i, value in enumerate(VALUES)],
    )
    text = table.csv()
    assert text.startswith("n,value\r\n") and text.endswith("\r\n")
    header, *rows = list(csv.reader(io.StringIO(text, newline="")))
    assert header == ["n", "value"]
    assert rows == [[str(i), value] for i, value in enumerate(VALUES)]
    assert "\\x" not in text


def test_the_text_forms_escape_what_csv_keeps():
    table = Table(["value"], [[value] for value in VALUES])
    for form in ("table", "markdown"):
        shown = table.render(form)
        assert not any(char in shown for char in "\r\x07\x00\x1b\u202e"), form
        assert "\\x0d" in shown and "\\u202e" in shown and "\\x1b[31m" in shown


def test_an_empty_table_is_no_csv_at_all():
    assert Table(["a"], [], records=[]).csv() == ""
