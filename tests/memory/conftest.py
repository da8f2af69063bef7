"""The stores the memory tests share: one a real SymfonicAgent wrote (copied to every kind), and
DeltaChannel stores at snapshot frequencies 1 and 100."""

from __future__ import annotations

import pytest

from tests.conftest import backend_for
from tests.support import agent_stores as ag
from tests.support import backends
from tests.support.backends import copy_store


@pytest.fixture(scope="session")
def agent_sqlite(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("agent") / "agent.db")
    ag.write_agent_store(path)
    return path


@pytest.fixture(scope="session")
def agent_stores(request, agent_sqlite):
    """kind -> (backend, url): the agent's store, copied through each kind's real saver once per
    session (per xdist worker) when first asked for. Only read: a test that changes one makes its
    own copy (the copy is the costly part: MongoDBSaver puts each checkpoint and write as an upsert)."""
    made: dict[str, tuple] = {}

    def get(kind: str):
        backend = backend_for(kind, request)
        if kind == "sqlite":
            return backend, agent_sqlite
        if kind not in made:
            url = backend.new_store(scenarios=False)
            with backend_for("sqlite", request).saver(agent_sqlite) as src, backend.saver(url) as dst:
                copy_store(src, dst)
            made[kind] = (backend, url)
        return made[kind]

    return get


@pytest.fixture(scope="module", params=[(k, f) for k in backends.KINDS for f in (1, 100)], ids=lambda p: f"{p[0]}-{p[1]}")
def delta_store(request, delta_stores):
    """Frequency 1: every latest checkpoint holds a snapshot; 100: none does."""
    kind, freq = request.param
    return (*delta_stores(kind, freq, request), freq)
