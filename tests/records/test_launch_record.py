"""The launch record's own constructors."""

import dataclasses

from pytest_gemmcheck.records.result import LaunchRecord


def test_a_numbered_record_is_the_dataclasss_own_and_shares_no_list():
    where = {"pid": 7, "host": "h", "device": "cuda:0", "device_uuid": "GPU-1"}
    made, fast = LaunchRecord(index=3, **where), LaunchRecord.numbered(3, where)
    assert dataclasses.asdict(fast) == dataclasses.asdict(made)
    other = LaunchRecord.numbered(4, where)
    fast.add_kind("wrong")
    fast.changed_inputs["a"] = 1
    fast.wrong_row_ids.append(2)
    assert other.kinds == [] and other.changed_inputs == {} and other.wrong_row_ids == [] and other.index == 4
