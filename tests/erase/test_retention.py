"""Retention sweeps on every store kind: threads written by the real graph with LangGraph's clock
moved back (tests/support/old_threads.py), selected by last activity through ``threads list`` and erased
through ``thread erase --inactive-for``."""

from __future__ import annotations

import io
import json
from datetime import datetime, timedelta, timezone

import pytest

from symfonic_cli.clock import checkpoint_id_time
from symfonic_cli.retention.window import id_bound
from tests.support.cli import run
from tests.support.hostile import fingerprint
from tests.support.old_threads import clock_moved_back, write_aged

DAY = timedelta(days=1)
AGES = {
    "acme:_:ancient": 400 * DAY,
    "acme:eu:old": 120 * DAY,
    "acme:_:month": 30 * DAY,
    "globex:_:old": 100 * DAY,
    "acme:_:today": timedelta(0),
}
IDLE_90 = {"acme:_:ancient", "acme:eu:old", "globex:_:old"}


@pytest.fixture(scope="module")
def aged(shared_kind):
    """A store holding AGES (written once per kind; only read by the listing tests)."""
    url = shared_kind.new_store(scenarios=False)
    write_aged(shared_kind, url, AGES)
    return shared_kind, url


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


# -- thread erase --inactive-for ------------------------------------------------------------------


def transcript(url: str, key: str) -> str:
    r = run("transcript", "show", "-s", url, "-t", key, "-f", "json")
    assert r.code == 0, r.err
    return r.out


def checkpoints_of(backend, url: str, key: str) -> int:
    with backend.saver(url) as saver:
        return len(list(saver.list({"configurable": {"thread_id": key}})))


def test_sweep_erases_exactly_the_idle_threads(any_kind):
    url = any_kind.new_store(scenarios=False)
    write_aged(any_kind, url, AGES)
    kept = {k: transcript(url, k) for k in AGES if k not in IDLE_90}
    started = datetime.now(timezone.utc)
    r = run("thread", "erase", "-s", url, "--inactive-for", "90d", "--tenant", "acme", "--yes", "-f", "json")
    assert r.code == 0, r.err
    receipt = json.loads(r.out)
    assert {t["key"]: t["status"] for t in receipt["threads"]} == {"acme:_:ancient": "erased", "acme:eu:old": "erased"}
    sel = receipt["selection"]
    assert sel["inactive_for"] == "90d" and sel["tenant"] == "acme" and sel["sub_tenant"] is None
    cut_off = datetime.fromisoformat(sel["cut_off"].replace("Z", "+00:00"))
    assert abs(cut_off - (started - 90 * DAY)) < timedelta(seconds=30)
    assert receipt["summary"]["erased"] == 2 and receipt["summary"]["skipped_active"] == 0
    assert checkpoints_of(any_kind, url, "acme:_:ancient") == 0 and checkpoints_of(any_kind, url, "acme:eu:old") == 0
    assert checkpoints_of(any_kind, url, "globex:_:old") > 0  # idle, but another tenant
    assert {k: transcript(url, k) for k in kept} == kept
    # Rerun: nothing idle is left in the selection; a normal outcome, exit 0.
    again = run("thread", "erase", "-s", url, "--inactive-for", "90d", "--tenant", "acme", "--yes", "-f", "json")
    assert again.code == 0 and json.loads(again.out)["summary"]["threads"] == 0
    # The dry run of the whole store plans the remaining idle thread only.
    dry = run("thread", "erase", "-s", url, "--inactive-since", (started - 90 * DAY).isoformat(), "--dry-run", "-f", "json")
    assert dry.code == 0 and [t["key"] for t in json.loads(dry.out)["threads"]] == ["globex:_:old"]


class _AgentWritesWhileOperatorTypes(io.StringIO):
    """Standard input of an operator who takes a while to confirm: meanwhile the agent answers a
    new turn on ``key`` (the real graph, the real clock), then the answer arrives."""

    def __init__(self, answer: str, backend, url: str, key: str) -> None:
        super().__init__(answer)
        self.backend, self.url, self.key = backend, url, key

    def readline(self, *args):
        write_aged(self.backend, self.url, {self.key: timedelta(0)}, turns=1)
        return super().readline(*args)


def test_thread_written_during_the_sweep_is_skipped_active(any_kind):
    from symfonic_cli.cli.app import main
    from symfonic_cli.environment import Environment

    url = any_kind.new_store(scenarios=False)
    write_aged(any_kind, url, AGES)
    out, err = io.StringIO(), io.StringIO()
    operator = _AgentWritesWhileOperatorTypes("3\n", any_kind, url, "acme:eu:old")
    env = Environment(stdout=out, stderr=err, stdin=operator, stdin_isatty=True)
    with pytest.raises(SystemExit) as exit_:
        main(["thread", "erase", "-s", url, "--inactive-for", "90d", "-f", "json"], environment=env)
    assert exit_.value.code == 0, err.getvalue()
    assert "Type the number of threads (3)" in err.getvalue()
    receipt = json.loads(out.getvalue())
    statuses = {t["key"]: t["status"] for t in receipt["threads"]}
    assert statuses == {"acme:_:ancient": "erased", "acme:eu:old": "skipped-active", "globex:_:old": "erased"}
    skipped = next(t for t in receipt["threads"] if t["key"] == "acme:eu:old")
    assert "active after the cut-off" in skipped["reason"] and skipped["rows_deleted"] == {}
    assert receipt["summary"]["skipped_active"] == 1 and receipt["summary"]["erased"] == 2
    # The thread is whole: its old turns and the new one.
    rows = json.loads(transcript(url, "acme:eu:old"))
    assert [r["content"] for r in rows if r["role"] == "user"] == ["turn 0 of acme:eu:old", "turn 1 of acme:eu:old", "turn 0 of acme:eu:old"]
    assert checkpoints_of(any_kind, url, "acme:_:ancient") == 0


def test_sweep_usage_errors(sqlite_store):
    url = str(sqlite_store)
    r = run("thread", "erase", "-s", url, "--inactive-for", "90d", "--thread", "acme:_:s-001", "--yes")
    assert r.code == 2 and "--tenant [--sub-tenant] only" in r.err
    r = run("thread", "erase", "-s", url, "--inactive-for", "ninety", "--yes")
    assert r.code == 2 and "not a duration" in r.err
    assert transcript(url, "acme:_:s-001")


def test_export_of_the_idle_threads(aged, tmp_path):
    _, url = aged
    out = tmp_path / "idle.zip"
    r = run("thread", "export", "-s", url, "--inactive-for", "90d", "-o", str(out))
    assert r.code == 0, r.err
    import zipfile

    with zipfile.ZipFile(out) as z:
        manifest = json.loads(z.read("manifest.json"))
        assert {t["key"] for t in manifest["threads"]} == IDLE_90
        for t in manifest["threads"]:
            assert z.read(t["file"]) == transcript(url, t["key"]).encode("utf-8")
    assert manifest["selection"]["inactive_for"] == "90d" and manifest["selection"]["cut_off"].endswith("Z")
    # Nothing idle is an empty bundle, exit 0, as a sweep that finds nothing.
    r = run("thread", "export", "-s", url, "--inactive-for", "2000d", "-o", str(tmp_path / "none"))
    assert r.code == 0 and json.loads((tmp_path / "none" / "manifest.json").read_text())["threads"] == []
