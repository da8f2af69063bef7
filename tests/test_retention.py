"""Retention sweeps on every store kind: threads written by the real graph with LangGraph's clock
moved back (tests/old_threads.py), selected by last activity through ``threads list`` and erased
through ``thread erase --inactive-for``."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from symfonic_cli.model.times import checkpoint_id_time
from symfonic_cli.retention.window import id_bound
from tests.cli import run
from tests.hostile import fingerprint
from tests.old_threads import clock_moved_back, write_aged

DAY = timedelta(days=1)
AGES = {
    "acme:_:ancient": 400 * DAY,
    "acme:eu:old": 120 * DAY,
    "acme:_:month": 30 * DAY,
    "globex:_:old": 100 * DAY,
    "acme:_:today": timedelta(0),
}
IDLE_90 = {"acme:_:ancient", "acme:eu:old", "globex:_:old"}

_stores: dict[str, str] = {}


@pytest.fixture
def aged(any_kind):
    """A store holding AGES (written once per kind; only read by the listing tests)."""
    if any_kind.kind not in _stores:
        url = any_kind.new_store(scenarios=False)
        write_aged(any_kind, url, AGES)
        _stores[any_kind.kind] = url
    return any_kind, _stores[any_kind.kind]


def listed(url: str, *args: str) -> list[dict]:
    r = run("threads", "list", "-s", url, "-f", "json", *args)
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_the_clock_moved_back_makes_old_ids_and_ts(aged):
    backend, url = aged
    with backend.saver(url) as saver:
        t = saver.get_tuple({"configurable": {"thread_id": "acme:_:ancient"}})
    age = datetime.now(timezone.utc) - checkpoint_id_time(t.checkpoint["id"])
    assert 399 * DAY < age < 401 * DAY
    ts_age = datetime.now(timezone.utc) - datetime.fromisoformat(t.checkpoint["ts"])
    assert 399 * DAY < ts_age < 401 * DAY


def test_inactive_for_lists_exactly_the_idle_threads(aged):
    backend, url = aged
    before = fingerprint(backend.kind, url)
    rows = listed(url, "--inactive-for", "90d")
    assert {r["key"] for r in rows} == IDLE_90
    # Newest activity first, as every listing.
    assert [r["key"] for r in rows] == ["globex:_:old", "acme:eu:old", "acme:_:ancient"]
    assert {r["key"] for r in listed(url, "--inactive-for", "2000d")} == set()
    assert {r["key"] for r in listed(url, "--inactive-for", "1h")} == set(AGES) - {"acme:_:today"}
    assert {r["key"] for r in listed(url, "--inactive-for", "90d", "--tenant", "acme")} == {"acme:_:ancient", "acme:eu:old"}
    assert {r["key"] for r in listed(url, "--inactive-for", "90d", "--tenant", "acme", "--sub-tenant", "eu")} == {"acme:eu:old"}
    assert [r["key"] for r in listed(url, "--inactive-for", "90d", "--limit", "1")] == ["globex:_:old"]
    assert fingerprint(backend.kind, url) == before


def test_active_within_and_inactive_since(aged):
    _, url = aged
    assert {r["key"] for r in listed(url, "--active-within", "7d")} == {"acme:_:today"}
    assert {r["key"] for r in listed(url, "--active-within", "60d")} == {"acme:_:today", "acme:_:month"}
    since = (datetime.now(timezone.utc) - 110 * DAY).date().isoformat()
    assert {r["key"] for r in listed(url, "--inactive-since", since)} == {"acme:_:ancient", "acme:eu:old"}
    # Both ends: idle for 60 days but active within the last 200.
    assert {r["key"] for r in listed(url, "--inactive-for", "60d", "--active-within", "200d")} == {"acme:eu:old", "globex:_:old"}


def test_window_combines_with_status_and_sort(aged):
    _, url = aged
    rows = listed(url, "--inactive-for", "90d", "--status", "done", "--sort", "first-activity")
    assert {r["key"] for r in rows} == IDLE_90 and all(r["status"] == "done" for r in rows)
    rows = listed(url, "--inactive-for", "90d", "--tenant", "acme", "--with-size", "--limit", "1")
    assert [r["key"] for r in rows] == ["acme:eu:old"] and rows[0]["size_bytes"] > 0


@pytest.mark.parametrize(
    "args, words",
    [
        (("--inactive-for", "90"), "not a duration"),
        (("--inactive-for", "-3d"), "not a duration"),
        (("--inactive-for", "99999999d"), "out of range"),
        (("--inactive-since", "yesterday"), "not an ISO 8601"),
        (("--inactive-for", "1d", "--inactive-since", "2026-01-01"), "not both"),
        (("--inactive-for", "90d", "--active-within", "30d"), "select no thread"),
    ],
)
def test_bad_windows_are_usage_errors(sqlite_store, args, words):
    r = run("threads", "list", "-s", str(sqlite_store), *args)
    assert r.code == 2 and words in r.err and r.out == ""


def test_id_bound_orders_like_the_ids():
    with clock_moved_back(timedelta(days=3)):
        from langgraph.checkpoint.base.id import uuid6

        old = str(uuid6(clock_seq=5))
    at = checkpoint_id_time(old)
    assert id_bound(at) <= old < id_bound(at + timedelta(microseconds=1))
