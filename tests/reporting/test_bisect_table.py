"""reporting/bisect_table.py: a bisection's report in its machine forms."""

from pytest_gemmcheck.reporting.bisect_table import render


def test_the_csv_of_a_bisection_is_its_probes_as_plain_values():
    probe = {
        "revision": "a" * 40,
        "position": 3,
        "bad": 1,
        "units": 5,
        "launches": 5,
        "seconds": 1.5,
        "source": "ran",
        "top_after": "b" * 40,
        "mass_after": 0.5,
        "note": "",
    }
    report = {
        "first_bad": None,
        "stopped": "budget",
        "stopped_words": "the budget was spent",
        "confidence": 0.95,
        "budget": "5 launches",
        "commits": 3,
        "unit": "launch",
        "units_counted": 5,
        "rate_good": 0.0,
        "rate_bad": 0.2,
        "launches": 5,
        "seconds": 1.5,
        "probes": [probe],
    }
    header, row = render(report, "csv").splitlines()
    assert header == "revision,position,bad,units,launches,seconds,source,top_after,mass_after,note"
    assert row == f"{'a' * 40},3,1,5,5,1.5,ran,{'b' * 40},0.5,"
