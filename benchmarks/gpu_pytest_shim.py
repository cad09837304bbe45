"""Stand-ins for ``--gemmcheck-stress`` and ``--gemmcheck-devices``, for gpu_run.sh on a
revision of the plugin that does not have those options yet: loaded with ``-p`` only then.

* Each pytest-xdist worker takes its own GPU (``devices.device_for_worker``, GPUs from
  GEMMCHECK_SHIM_DEVICES, default all), before any test touches CUDA.
* Each test's call runs inside ``stress.load(GEMMCHECK_SHIM_STRESS, device)`` (default none),
  and the load's one-line summary is added to the test's JUnit properties.
"""

from __future__ import annotations

import os

import pytest

from pytest_gemmcheck.config import devices
from pytest_gemmcheck.environment import stress


def pytest_configure(config: pytest.Config) -> None:
    import torch

    if torch.cuda.is_available():
        worker = getattr(config, "workerinput", {}).get("workerid")
        index = devices.device_for_worker(worker, os.environ.get("GEMMCHECK_SHIM_DEVICES"), torch.cuda.device_count())
        torch.cuda.set_device(index)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    import torch

    kind = os.environ.get("GEMMCHECK_SHIM_STRESS", "none")
    device = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")
    with stress.load(kind, device) as background:
        yield
    item.user_properties.append(("stress", background.summary()))
