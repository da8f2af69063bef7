"""Shared fixtures. Store kinds plug in through the pytest plugins listed below.

``any_kind`` parametrizes a test over every store kind; a kind whose server is not available
fails the test when ``SYMFONIC_REQUIRE_<KIND>`` is set (as in CI) and skips it otherwise.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.support import backends

pytest_plugins: list[str] = ["tests.support.markers", "tests.support.mongo_server", "tests.support.pg_server", "tests.support.pg_standby"]


@pytest.fixture(scope="session", autouse=True)
def _sqlite_backend(tmp_path_factory) -> backends.SqliteBackend:
    backend = backends.SqliteBackend(tmp_path_factory.mktemp("sqlite-stores"))
    backends.register(backend)
    return backend


@pytest.fixture(scope="session")
def sqlite_master(_sqlite_backend) -> Path:
    """The scenario store, built once by real graphs (the SQLite backend's master); tests get copies."""
    return _sqlite_backend.master()


@pytest.fixture
def sqlite_store(sqlite_master, tmp_path) -> Path:
    """A private copy of the scenario store (safe to erase or lock)."""
    dest = tmp_path / "store.db"
    shutil.copyfile(sqlite_master, dest)
    return dest


_REQUIRE = {"postgres": "SYMFONIC_REQUIRE_POSTGRES", "mongodb": "SYMFONIC_REQUIRE_MONGO"}


def backend_for(kind: str, request) -> backends.TestBackend:
    # Plugins start their server lazily through a session fixture named "<kind>_backend".
    if kind != "sqlite":
        from tests.support.markers import require

        require(kind)
        try:
            request.getfixturevalue(f"{kind}_backend")
        except pytest.FixtureLookupError:
            pass
    backend = backends.get(kind)
    if backend is None:
        if os.environ.get(_REQUIRE.get(kind, ""), ""):
            pytest.fail(f"{kind} test server required ({_REQUIRE[kind]}=1) but not available")
        pytest.skip(f"no {kind} test server")
    return backend


@pytest.fixture(params=backends.KINDS)
def any_kind(request) -> backends.TestBackend:
    """The test backend of each store kind in turn."""
    return backend_for(request.param, request)


@pytest.fixture(scope="module", params=backends.KINDS)
def shared_kind(request) -> backends.TestBackend:
    """``any_kind`` for a module-scoped fixture: a store written once per kind for the module's
    tests, which only read it (tests/support/markers.py: not each test's cost, so not ``slow``)."""
    return backend_for(request.param, request)


@pytest.fixture(scope="session")
def demo_master(tmp_path_factory) -> Path:
    """``symfonic demo``'s store (real graphs), written once per session (per xdist worker); a
    module or a test that changes it works on a copy."""
    from symfonic_cli.demo import create_demo_store

    path = tmp_path_factory.mktemp("demo-master") / "demo.db"
    create_demo_store(path)
    return path


@pytest.fixture(scope="session")
def fixed_demo_master(tmp_path_factory) -> Path:
    """The demo store written with LangGraph's checkpoint clock and message ids fixed
    (tests/support/browser.py): the same ids and times in every run, for screen snapshots."""
    from symfonic_cli.demo import create_demo_store
    from tests.support.browser import fixed_time_store

    path = tmp_path_factory.mktemp("fixed-demo-master") / "demo.db"
    fixed_time_store(create_demo_store, path)
    return path


@pytest.fixture(scope="session")
def delta_stores():
    """(kind, snapshot frequency, request) -> (backend, url): a store holding the DeltaChannel
    scenarios (tests/support/delta_scenarios.py), written by real graphs once per session (per
    xdist worker) when first asked for. Only read: a test that changes one makes its own."""
    from tests.support.delta_scenarios import write_delta_scenarios

    made: dict[tuple[str, int], str] = {}

    def get(kind: str, frequency: int, request) -> tuple[backends.TestBackend, str]:
        backend = backend_for(kind, request)
        if (kind, frequency) not in made:
            url = backend.new_store(scenarios=False)
            with backend.saver(url) as saver:
                write_delta_scenarios(saver, frequency)
            made[(kind, frequency)] = url
        return backend, made[(kind, frequency)]

    return get


@pytest.fixture(scope="session")
def run_state_stores(request):
    """kind -> (backend, url, oracle graphs by key): the run-state threads of
    tests/support/run_state_scenarios.py, written by real graphs once per kind (per xdist worker)
    when first asked for. Only read: a test that changes a store makes its own."""
    from tests.support import run_state_scenarios as rs

    made = {}

    def get(kind):
        if kind not in made:
            backend = backend_for(kind, request)
            url = backend.new_store(scenarios=False)
            with backend.saver(url) as saver:
                graphs = rs.write_states(saver)
            rs.write_killed(kind, url)
            graphs["acme:_:killed"] = rs.kill_graph().compile()
            graphs["acme:_:fanout-killed"] = rs.fanout_graph().compile()
            made[kind] = (backend, url, graphs)
        else:
            backend_for(kind, request)  # the marker check, for every test that asks
        return made[kind]

    return get
