import pytest
import torch


@pytest.fixture(autouse=True)
def one_thread():
    """The search's probes are small GEMMs: torch's thread pool on a machine whose cores are
    busy costs more than it gives (seconds per operand), so the tests run them on one thread."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
