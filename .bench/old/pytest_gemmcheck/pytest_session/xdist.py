"""pytest-xdist's side of the session, registered only when xdist is there: the controller
hands each worker the run's token (workerinput), so that a worker judges its results against
the history without this run's own, which the controller writes as reports arrive."""

from __future__ import annotations

from .state import WORKER_TOKEN, GemmcheckSession


class XdistHooks:
    def __init__(self, session: GemmcheckSession):
        self.session = session

    def pytest_configure_node(self, node) -> None:
        node.workerinput[WORKER_TOKEN] = self.session.history.token
