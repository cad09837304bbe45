"""A result's plain form (records/result.py): CaseResult.to_dict, what rides on a test's report,
is written to the fallback file and handed to hooks, and from_dict reads it back."""

import dataclasses
import json

from pytest_gemmcheck.records.result import CaseResult, LaunchRecord


def a_result() -> CaseResult:
    launch = LaunchRecord(index=1, pid=7, host="h", device="cuda:0", device_uuid="GPU-1")
    launch.add_kind("wrong")
    launch.wrong, launch.wrong_row_ids, launch.changed_inputs = 3, [0, 5], {"a": 2}
    return CaseResult(
        key="k",
        kernel="gemm",
        m=64,
        n=64,
        k=64,
        quant="bf16",
        tile="16x16",
        out_dtype="bfloat16",
        params={"block": [64, 64], "name": "tiled", "grid": (2, 3)},
        fp8=None,
        seed=0,
        device="cuda:0",
        deterministic=True,
        rtol=0.05,
        floor=1.0,
        launches=[launch, LaunchRecord(index=2, pid=7, host="h", device="cuda:0", device_uuid="GPU-1")],
        stack={"fingerprint": "f", "gpu": {"name": "H100"}},
        contention={"start": {"processes": [{"pid": 1}]}},
    )


def test_the_plain_form_is_what_dataclasses_gives():
    result = a_result()
    expected = {"type": "launched", **dataclasses.asdict(result), "sanitize": []}
    assert result.to_dict() == expected
    assert result.to_dict()["params"]["grid"] == (2, 3)  # a tuple stays one


def test_the_plain_form_is_a_copy():
    result = a_result()
    data = result.to_dict()
    data["params"]["block"].append(1)
    data["launches"][0]["wrong_row_ids"].append(9)
    data["stack"]["gpu"]["name"] = "changed"
    assert result.params["block"] == [64, 64]
    assert result.launches[0].wrong_row_ids == [0, 5]
    assert result.stack["gpu"]["name"] == "H100"


def test_from_dict_reads_back_the_plain_form_through_json():
    result = a_result()
    again = CaseResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.launches == result.launches
    assert [launch.index for launch in again.bad_launches] == [1]
    assert again.params == {**result.params, "grid": [2, 3]} and again.tile == "16x16"
