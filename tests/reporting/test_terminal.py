"""reporting/terminal.py and the failure message it sits beside: what a user chose (a param, a
kernel's exception) cannot reorder, recolour or hide what pytest prints, in the terminal nor in
the --gemmcheck-summary markdown."""

import shutil
import textwrap

from pytest_gemmcheck.records.printable import printable

BIDI = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: what follows it is shown reversed


def test_printable_escapes_what_a_terminal_would_not_show_as_itself():
    assert printable("plain text, ünïcode µ") == "plain text, ünïcode µ"
    assert (
        printable("a\u202eb\u2066c\u200bd\x1be\x7ff\x9bg\u2028h\ufeffi")
        == "a\\u202eb\\u2066c\\u200bd\\x1be\\x7ff\\x9bg\\u2028h\\ufeffi"
    )
    assert printable("tag\U000e0041") == "tag\\U000e0041"  # an invisible tag character
    assert printable("one\ntwo\tthree") == "one\\x0atwo\\x09three"  # a cell is one line
    assert printable("one\ntwo\u202e", lines=True) == "one\ntwo\\u202e"  # a message keeps its lines


def test_a_bidi_control_in_a_param_is_escaped_in_the_summary_the_message_and_the_markdown(pytester, examples_dir):
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makepyfile(
        test_bidi=textwrap.dedent("""
        from kernels import bf16_matmul

        BIDI = chr(0x202e)  # not in this source: pytest shows the failing test's source lines as they are

        def off_by_one(x, out):
            bf16_matmul(x, out)
            out[0, 0] += 100

        def test_passes(gemmcheck):
            case = gemmcheck.case("gemm", m=16, n=16, k=32, params={"name": BIDI + "exe.txt"})
            x = case.inputs()
            case.run(lambda out: bf16_matmul(x, out))

        def test_fails(gemmcheck):
            case = gemmcheck.case("gemm", m=16, n=16, k=32, params={"variant": "abc" + BIDI + "def"})
            x = case.inputs()
            case.run(lambda out: off_by_one(x, out))
    """)
    )
    summary = pytester.path / "summary.md"
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--gemmcheck-repeat=2", "--gemmcheck-no-record", f"--gemmcheck-summary={summary}"
    )
    result.assert_outcomes(passed=1, failed=1)
    output = result.stdout.str()
    assert BIDI not in output, [line for line in result.stdout.lines if BIDI in line]
    result.stdout.fnmatch_lines(
        [
            "E * gemmcheck: gemm bf16 16x16x32 variant=abc\\u202edef: regression",
            "PASS * gemm bf16 16x16x32 name=\\u202eexe.txt: 0/2 launches bad",
        ]
    )
    markdown = summary.read_text()
    assert BIDI not in markdown and "name=\\u202eexe.txt" in markdown and "variant=abc\\u202edef" in markdown
