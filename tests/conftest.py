"""Shared fixtures. Store kinds plug in through the pytest plugins listed below.

``any_kind`` parametrizes a test over every store kind; a kind whose server is not available
fails the test when ``SYMFONIC_REQUIRE_<KIND>`` is set (as in CI) and skips it otherwise.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.support import backends, markers

pytest_plugins: list[str] = ["tests.support.markers", "tests.support.mongo_server", "tests.support.pg_server"]


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
        markers.require(kind)
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
