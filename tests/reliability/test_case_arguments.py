"""A case's arguments are checked where they are given: each bad one is a CaseError in one line
that names it, never a raw torch or Python error, and a case too large for its device is refused
with what it needs and what there is, before anything is allocated."""

import pytest

from pytest_gemmcheck.errors import CaseError


@pytest.mark.parametrize(
    "arguments, words",
    [
        (dict(deterministic="no"), "deterministic must be True, False or None"),
        (dict(deterministic=0.5), "deterministic must be True, False or None"),
        (dict(device="meta"), "device='meta': a case runs on the CPU or a GPU"),
        (dict(device="nonsense"), "device='nonsense' is not a device"),
        (dict(device=5), "device=5"),
        (dict(device="cuda:7"), "device='cuda:7'"),
        (dict(params=[1, 2]), "params must be a dict of the kernel's knobs by name"),
        (dict(params="fuse=1"), "params must be a dict of the kernel's knobs by name"),
        (dict(params={1: True}), "params must be a dict of the kernel's knobs by name"),
        (dict(sanitize_shape=(64, 64)), "sanitize_shape: expected (m, n, k)"),
    ],
)
def test_a_bad_argument_is_a_case_error_naming_it(make_case, arguments, words):
    with pytest.raises(CaseError) as raised:
        make_case("kern", m=64, n=64, k=64, **arguments)
    assert words in str(raised.value) and "\n" not in str(raised.value)


def test_a_case_too_large_for_its_device_says_what_it_needs(make_case):
    with pytest.raises(CaseError, match=r"^a 1048576x8192x8192 case needs [0-9.]+ GB of [0-9.]+ GB on cpu"):
        make_case("kern", m=1 << 20, n=8192, k=8192, device="cpu")


def test_case_arguments_in_a_session_are_the_tests_error(pytester):
    pytester.makepyfile("""
        def test_bad(gemmcheck):
            gemmcheck.case("kern", m=64, n=64, k=64, device="meta")
    """)
    result = pytester.runpytest("--gemmcheck-no-record")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*CaseError: device='meta': a case runs on the CPU or a GPU*"])
