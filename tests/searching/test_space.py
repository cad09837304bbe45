"""The space's axes, the order each prefers, and what "smallest" means."""

import pytest

from pytest_gemmcheck.errors import CaseError
from pytest_gemmcheck.searching.space import Config, parse_axis, parse_space


def space(**overrides):
    axes = dict(m=(64, 512, 64), n=(64, 512, 64), k=(128, 1024, 128), quant=["bf16"], params=None, tile=None)
    axes.update(overrides)
    return parse_space(**axes)


def test_an_axis_is_the_multiples_of_its_step_and_one_number_is_fixed():
    assert list(parse_axis("m", (64, 320, 64)).values) == [64, 128, 192, 256, 320]
    fixed = parse_axis("n", 7168)
    assert list(fixed.values) == [7168] and fixed.fixed
    with pytest.raises(CaseError, match=r"m=\(64, 300, 64\): lo and hi must be multiples of the step 64"):
        parse_axis("m", (64, 300, 64))
    with pytest.raises(CaseError, match="expected \\(lo, hi, step\\) of whole numbers"):
        parse_axis("k", (128.0, 256, 128))
    with pytest.raises(CaseError, match="expected \\(lo, hi, step\\)"):
        parse_axis("k", True)


def test_a_list_is_the_values_to_try_never_lo_hi_step():
    listed = parse_axis("m", [128, 256, 64])
    assert list(listed.values) == [64, 128, 256] and listed.step is None and not listed.fixed
    assert listed.spec() == {"values": [64, 128, 256]}
    assert parse_axis("m", [192]).fixed and list(parse_axis("m", [192]).values) == [192]
    assert space(m=[128, 256, 64]).landmarks("m") == ()  # each value was chosen: none preferred
    for bad, message in (
        ([], r"m=\[\]: expected a non-empty list"),
        ([64, 64], "m lists 64 twice"),
        ([64, 128.0], "m: 128.0 is not a whole number >= 1"),
        ([0, 64], "m: 0 is not a whole"),
    ):
        with pytest.raises(CaseError, match=message):
            parse_axis("m", bad)


def test_an_axis_of_a_billion_values_is_never_listed():
    huge = space(m=(16, 16 * 10**9, 16), tile=(128, 128))
    axis = huge.axis("m")
    assert len(axis.values) == 10**9 and axis.index(16 * 10**9) == 10**9 - 1
    landmarks = huge.landmarks("m")  # 112, 128, 144, 240, ...: found from their index
    assert len(landmarks) == 3 * 125_000_000 - 1 and landmarks[:4] == (112, 128, 144, 240)
    assert landmarks[-1] == 16 * 10**9 and 16 * 10**9 - 16 in landmarks and 16 * 10**9 - 32 not in landmarks
    assert huge.size == 10**9 * 8 * 8


def test_m_and_n_prefer_tile_edges_and_one_step_either_side():
    tiled = space(m=(16, 512, 16), n=(16, 512, 16), tile=(128, 256))
    assert tuple(tiled.landmarks("m")) == (112, 128, 144, 240, 256, 272, 368, 384, 400, 496, 512)
    assert tuple(tiled.landmarks("n")) == (240, 256, 272, 496, 512)  # the tile's columns


def test_without_a_tile_powers_of_two_are_the_edges():
    assert space(m=(64, 1024, 64)).landmarks("m") == (64, 128, 192, 256, 320, 448, 512, 576, 960, 1024)


def test_k_prefers_the_first_blocks_around_a_pipelines_depth_and_powers_of_two():
    assert space(k=(64, 2048, 64)).landmarks("k") == (64, 128, 192, 256, 320, 512, 1024, 2048)
    assert space(k=(128, 4096, 128)).landmarks("k") == (128, 256, 384, 512, 640, 1024, 2048, 4096)


def test_smallest_is_least_mnk_then_fewest_params_moved_then_least_memory():
    s = space(quant=["bf16", "ptpc"], params={"split": [1, 2], "swizzle": [False, True]})

    def key(m, n, k, quant=0, params=(0, 0)):
        return s.size_key(Config(m, n, k, quant, params), {"bf16": 2, "ptpc": 1}.__getitem__)

    assert key(64, 128, 128) < key(128, 128, 128)
    assert key(128, 128, 128, params=(1, 1)) < key(256, 128, 128)  # m·n·k first
    assert key(128, 128, 128, params=(1, 0)) < key(128, 128, 128, params=(1, 1))
    assert key(128, 128, 128, quant=1) < key(128, 128, 128, quant=0)  # fp8 operands take half the memory
    assert key(64, 256, 128) < key(256, 64, 256)  # the same m·n·k: less memory in A and B


def test_configurations_go_to_dicts_and_back():
    s = space(quant=["bf16", "ptpc"], params={"split": [1, 2], "mode": [{"a": 1}, None]})
    config = Config(128, 64, 256, 1, (1, 0))
    data = s.as_dict(config)
    assert data == {"m": 128, "n": 64, "k": 256, "quant": "ptpc", "params": {"split": 2, "mode": {"a": 1}}}
    assert s.from_dict(data) == config
    with pytest.raises(CaseError, match="is not one of m's values"):
        s.from_dict({**data, "m": 100})
    with pytest.raises(CaseError, match="is not a configuration of this search"):
        s.from_dict({**data, "params": {"split": 2}})


@pytest.mark.parametrize("stored", [{"k": 256.0}, {"m": True}, {"m": "128"}, {"params": ["split"]}, {"quant": None}])
def test_a_stored_value_of_the_wrong_type_is_no_configuration(stored):
    s = space(m=(1, 512, 1), quant=["bf16", "ptpc"], params={"split": [1, 2]})
    data = {"m": 1, "n": 64, "k": 256, "quant": "ptpc", "params": {"split": 2}}
    assert s.from_dict(data) == Config(1, 64, 256, 1, (1,))
    with pytest.raises(CaseError, match="is not a configuration of this search"):
        s.from_dict({**data, **stored})
    for value in ([1, 2], "text", 5):
        with pytest.raises(CaseError, match="is not a configuration of this search"):
            s.from_dict(value)


def test_the_database_key_is_the_space():
    assert space().digest("kern", {}) == space().digest("kern", {})
    assert space().digest("kern", {}) != space(m=(64, 576, 64)).digest("kern", {})
    assert space().digest("kern", {}) != space().digest("other", {})
    assert space().digest("kern", {}) != space().digest("kern", {"out_dtype": "float32"})
