"""Shared fixtures. Store kinds plug in through the pytest plugins listed below."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.sqlite_store import build_sqlite_store

pytest_plugins: list[str] = []


@pytest.fixture(scope="session")
def sqlite_master(tmp_path_factory) -> Path:
    """The scenario store, built once by real graphs; tests get copies."""
    path = tmp_path_factory.mktemp("master") / "scenarios.db"
    build_sqlite_store(path)
    return path


@pytest.fixture
def sqlite_store(sqlite_master, tmp_path) -> Path:
    """A private copy of the scenario store (safe to erase or lock)."""
    dest = tmp_path / "store.db"
    shutil.copyfile(sqlite_master, dest)
    return dest
