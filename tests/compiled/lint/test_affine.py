"""Integer operations on values affine in a folded loop's iteration count."""

from pytest_gemmcheck.compiled.lint import affine


def test_magic_numbers_are_the_divisions_llvm_emits():
    assert affine.magic_divisor(0xAAAAAAAB) == (3, 1)  # x / 3: mul_hi, then >> 1
    assert affine.magic_divisor(0xCCCCCCCD) == (5, 2)
    assert affine.magic_divisor(0x12345) is None
