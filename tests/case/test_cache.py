"""The session's byte-bounded cache of inputs and references (case/cache.py)."""

import torch

from pytest_gemmcheck.case.cache import LruCache


def tensor(kib: int) -> torch.Tensor:
    return torch.zeros(kib * 256, dtype=torch.float32)  # kib KiB


def test_the_least_recently_used_go_first_once_the_bytes_pass_the_budget():
    cache = LruCache(budget_bytes=10 << 10)
    for key in range(4):
        cache.get(key, lambda: tensor(3))
    assert [key for key in range(4) if key in cache] == [1, 2, 3]  # 0 went when 3 came (12 KiB > 10)
    cache.get(1, lambda: tensor(3))  # used: 2 is now the least recently used
    cache.get(4, lambda: tensor(3))
    assert [key for key in range(5) if key in cache] == [1, 3, 4]


def test_a_value_is_made_once_while_it_is_kept():
    cache = LruCache(budget_bytes=10 << 10)
    made = []
    for _ in range(3):
        cache.get("a", lambda: made.append(1) or tensor(1))
    assert len(made) == 1


def test_a_value_larger_than_the_budget_is_handed_out_and_not_kept():
    cache = LruCache(budget_bytes=1 << 10)
    big = cache.get("big", lambda: tensor(2))
    assert big.numel() == 512
    assert "big" not in cache


def test_discarded_entries_free_their_bytes_for_others():
    cache = LruCache(budget_bytes=10 << 10)
    for key in range(3):
        cache.get(key, lambda: tensor(3))
    cache.discard(lambda key: key in (0, 1))
    cache.get(3, lambda: tensor(3))
    cache.get(4, lambda: tensor(3))  # 2, 3 and 4: 9 KiB, within the budget
    assert [key for key in range(5) if key in cache] == [2, 3, 4]


def test_many_entries_stay_within_the_budget():
    cache = LruCache(budget_bytes=64 << 10)
    for key in range(1000):
        cache.get(key, lambda: tensor(1))
    kept = [key for key in range(1000) if key in cache]
    assert kept == list(range(936, 1000))
