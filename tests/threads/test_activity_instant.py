"""Activity is an instant, never a string comparison (issue 21 item 1), on every store kind.

Threads are written by the real graph and saver (aged with LangGraph's clock moved back,
tests/support/old_threads.py), then their ids rewritten where a writer of another form puts them
(tests/support/rewritten_ids.py): upper-case UUIDv6 written seconds ago, ISO 8601 ids idle for 400
days, and ids that carry no time beside checkpoints without a ``ts``.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from tests.support.cli import run
from tests.support.old_threads import write_aged
from tests.support.rewritten_ids import rewrite_ids

DAY = timedelta(days=1)
AGES = {
    "acme:_:upper-now": timedelta(0),  # upper-case UUIDv6, written seconds ago: active
    "acme:_:iso-old": 400 * DAY,  # ISO 8601 ids, idle 400 days
    "acme:_:plain-old": 120 * DAY,  # LangGraph's own ids, idle
    "acme:_:plain-now": timedelta(0),
    "acme:_:upper-old": 200 * DAY,  # upper-case UUIDv6, idle
    "acme:_:iso-now": timedelta(0),  # ISO 8601 ids, written seconds ago: active
    "acme:_:nodate": 300 * DAY,  # ids without a time and no ts: undatable
}
FORMS = {"acme:_:upper-now": "upper", "acme:_:upper-old": "upper", "acme:_:iso-old": "iso", "acme:_:iso-now": "iso", "acme:_:nodate": "undatable"}
IDLE = {"acme:_:iso-old", "acme:_:plain-old", "acme:_:upper-old"}
ACTIVE = {"acme:_:upper-now", "acme:_:plain-now", "acme:_:iso-now"}


def _store(backend) -> str:
    url = backend.new_store(scenarios=False)
    write_aged(backend, url, AGES)
    for key, form in FORMS.items():
        rewrite_ids(backend.kind, url, key, form)
    return url


@pytest.fixture
def mixed(any_kind):
    return any_kind, _store(any_kind)


def listed(url: str, *args: str) -> tuple[list[dict], str]:
    r = run("threads", "list", "-s", url, "-f", "json", *args)
    assert r.code == 0, r.err
    return json.loads(r.out), r.err


def _age(row: dict) -> timedelta:
    return datetime.now(timezone.utc) - datetime.fromisoformat(row["last_activity"].replace("Z", "+00:00"))


def test_the_rewritten_ids_are_what_the_store_holds(mixed):
    backend, url = mixed
    with backend.saver(url) as saver:
        upper = saver.get_tuple({"configurable": {"thread_id": "acme:_:upper-now"}})
        iso = saver.get_tuple({"configurable": {"thread_id": "acme:_:iso-old"}})
        nodate = saver.get_tuple({"configurable": {"thread_id": "acme:_:nodate"}})
    assert upper.checkpoint["id"] == upper.checkpoint["id"].upper() and upper.checkpoint["id"][14] == "6"
    assert iso.checkpoint["id"] == iso.checkpoint["ts"]
    assert nodate.checkpoint["id"].startswith("step-") and "ts" not in nodate.checkpoint
    # The savers read them back as threads: the transcript is still there.
    r = run("transcript", "show", "-s", url, "-t", "acme:_:iso-old", "-f", "json")
    assert r.code == 0 and "turn 1 of acme:_:iso-old" in r.out


def test_listing_by_instant(mixed):
    _, url = mixed
    rows, err = listed(url, "--inactive-for", "90d")
    assert {r["key"] for r in rows} == IDLE | {"acme:_:nodate"}
    assert "undatable" in err and "1 thread(s)" in err
    by_key = {r["key"]: r for r in rows}
    assert 399 * DAY < _age(by_key["acme:_:iso-old"]) < 401 * DAY
    assert 199 * DAY < _age(by_key["acme:_:upper-old"]) < 201 * DAY
    assert by_key["acme:_:nodate"]["last_activity"] is None
    # Newest first by instant, the undatable one last.
    assert [r["key"] for r in rows] == ["acme:_:plain-old", "acme:_:upper-old", "acme:_:iso-old", "acme:_:nodate"]
    assert [r["key"] for r in listed(url, "--inactive-for", "90d", "--limit", "2")[0]] == ["acme:_:plain-old", "acme:_:upper-old"]
    active, _ = listed(url, "--active-within", "1h")
    assert {r["key"] for r in active} - {"acme:_:nodate"} == ACTIVE
    # --since/--until: last activity inside the window, the grammar of transcript show.
    since = (datetime.now(timezone.utc) - 250 * DAY).date().isoformat()
    until = (datetime.now(timezone.utc) - 100 * DAY).date().isoformat()
    window, _ = listed(url, "--since", since, "--until", until)
    assert {r["key"] for r in window} - {"acme:_:nodate"} == {"acme:_:plain-old", "acme:_:upper-old"}
    assert {r["key"] for r in listed(url, "--since", "1h")[0]} - {"acme:_:nodate"} == ACTIVE
    # The plain listing sorts by instant too.
    every, _ = listed(url)
    order = [r["key"] for r in every]
    assert set(order[:3]) == ACTIVE and order[3:] == ["acme:_:plain-old", "acme:_:upper-old", "acme:_:iso-old", "acme:_:nodate"]


def test_status_listing_by_instant(mixed):
    _, url = mixed
    rows, err = listed(url, "--inactive-for", "90d", "--status", "done")
    assert {r["key"] for r in rows} == IDLE | {"acme:_:nodate"} and "undatable" in err
    rows, _ = listed(url, "--inactive-for", "90d", "--sort", "last-activity", "--with-size")
    assert [r["key"] for r in rows] == ["acme:_:plain-old", "acme:_:upper-old", "acme:_:iso-old", "acme:_:nodate"]


def test_an_id_between_the_least_and_the_greatest_is_read_by_its_instant(any_kind, tmp_path):
    """Lowercase ids around one upper-case-lettered UUIDv6 that sorts between them and is the
    latest by its time: every listing finds it latest (the least and greatest ids alone say
    otherwise), and the thread is never taken for idle by them."""
    from symfonic_cli.clock import checkpoint_id_time, iso_utc
    from tests.support.rewritten_ids import BETWEEN_ID, BETWEEN_LAST

    url = any_kind.new_store(scenarios=False)
    write_aged(any_kind, url, {"acme:_:between": 30 * DAY})
    rewrite_ids(any_kind.kind, url, "acme:_:between", "between")
    latest = iso_utc(checkpoint_id_time(BETWEEN_ID))
    assert checkpoint_id_time(BETWEEN_ID) > checkpoint_id_time(BETWEEN_LAST) and BETWEEN_ID < BETWEEN_LAST
    for args in ((), ("--status", "done,error,interrupted,pending"), ("--status", "done"), ("--with-size",)):
        rows, _ = listed(url, *args)
        assert [(r["key"], r["last_activity"]) for r in rows] == [("acme:_:between", latest)], args
    # One thread's summary too (thread export's manifest, the commands that name one thread).
    r = run("thread", "export", "-s", url, "-t", "acme:_:between", "-o", str(tmp_path / "bundle"))
    assert r.code == 0, r.err
    manifest = json.loads((tmp_path / "bundle" / "manifest.json").read_text())
    assert [(t["key"], t["last_activity"]) for t in manifest["threads"]] == [("acme:_:between", latest)]


def test_sweep_erases_by_instant(mixed):
    backend, url = mixed
    dry = run("thread", "erase", "-s", url, "--inactive-for", "90d", "--dry-run")
    assert dry.code == 0, dry.err
    assert "3 thread(s) idle for 90d" in dry.out and "acme:_:upper-now" not in dry.out and "nodate" not in dry.out
    assert "None" not in dry.out
    r = run("thread", "erase", "-s", url, "--inactive-for", "90d", "--yes", "-f", "json")
    assert r.code == 0, r.err
    receipt = json.loads(r.out)
    assert {t["key"]: t["status"] for t in receipt["threads"]} == dict.fromkeys(IDLE, "erased")
    with backend.saver(url) as saver:
        for key in AGES:
            left = list(saver.list({"configurable": {"thread_id": key}}))
            assert bool(left) == (key not in IDLE), key


def test_the_recheck_decides_by_instant(any_kind):
    """The in-transaction re-check, called with the sweep's bound: an upper-case thread written
    seconds ago is refused, an ISO thread idle for 400 days erased, an undatable one refused."""
    from symfonic_cli import clock
    from symfonic_cli.errors import ThreadActiveError
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    url = _store(any_kind)
    bound = clock.id_at(datetime.now(timezone.utc) - 90 * DAY)
    with open_store(parse_location(url), writable=True) as st:
        for key in ("acme:_:upper-now", "acme:_:iso-now", "acme:_:nodate"):
            with pytest.raises(ThreadActiveError):
                st.erase_thread(key, (), idle_before=bound)
        assert st.erase_thread("acme:_:iso-old", (), idle_before=bound)["checkpoints"] > 0
        assert st.erase_thread("acme:_:upper-old", (), idle_before=bound)["checkpoints"] > 0
    with any_kind.saver(url) as saver:
        assert list(saver.list({"configurable": {"thread_id": "acme:_:upper-now"}}))
        assert not list(saver.list({"configurable": {"thread_id": "acme:_:iso-old"}}))


def test_mongodb_listing_without_pushed_ids_is_the_same(request):
    """MongoDB lists from each thread's pushed ids, tested here; a $group too large to push (a
    16 MB document) falls back to the server's regex per id: both give the same rows (the odd
    threads, then the others in order), with and without bounds and limits."""
    from symfonic_cli import clock
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store
    from symfonic_cli.stores.mongodb._common import A_KEY
    from tests.conftest import backend_for

    backend = backend_for("mongodb", request)
    url = _store(backend)
    bound = clock.id_at(datetime.now(timezone.utc) - 90 * DAY)
    group = {"_id": "$thread_id", "n": {"$sum": 1}, "first": {"$min": "$checkpoint_id"}, "last": {"$max": "$checkpoint_id"}}
    with open_store(parse_location(url)) as st:
        # The odd threads (both ways send every one, whatever the limit), then at most ``limit`` others.
        for limit, before, since in [(None, None, None), (None, bound, None), (None, None, bound), (6, None, None), (7, bound, None), (2, None, None)]:
            pushed = list(st._thread_rows(None, None, limit, before, since))
            by_regex = list(st._regex_rows(dict(A_KEY), group, limit, before, since))
            shape = [t[:5] for t in pushed]
            assert sorted(t for t in shape if t[4]) == sorted(t[:5] for t in by_regex if t.odd), (limit, before, since)
            assert [t for t in shape if not t[4]] == [t[:5] for t in by_regex if not t.odd], (limit, before, since)
            assert len(pushed) == len(by_regex) and (limit is None or sum(not t[4] for t in shape) <= limit)
            assert sum(t[4] for t in shape) == len(FORMS) if limit is None and before is None and since is None else True
            listed = list(st.list_threads(limit=limit, last_before=before, last_from=since))
            assert all(t.last_at == clock.checkpoint_id_time(t.last_checkpoint_id) for t in listed if t.key not in FORMS)
        assert {t.key for t in st._thread_rows(None, None, None, None, None) if t.odd} == set(FORMS)


def test_mongodb_run_states_without_pushed_ids_are_the_same(request):
    """`threads list --status` on MongoDB: each thread's ids pushed and tested here, or (a group
    too large to push) by the server's regex per id: the same groups, the same odd threads, and
    the listing gives every thread its time by instant."""
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store
    from symfonic_cli.stores.mongodb._common import A_KEY
    from tests.conftest import backend_for

    backend = backend_for("mongodb", request)
    url = _store(backend)
    group = {"_id": "$thread_id", "n": {"$sum": 1}, "first": {"$min": "$checkpoint_id"}, "last": {"$max": "$checkpoint_id"}}
    with open_store(parse_location(url)) as st:
        match = {"thread_id": dict(A_KEY)}
        coll = st._collation(st.checkpoints)
        pushed = list(st._summaries(match, group, coll))
        by_regex = list(st._summaries(match, group, coll, pushed=False))
        assert pushed == by_regex and len(pushed) == len(AGES)
        assert {d["_id"] for d in pushed if d["odd"]} == set(FORMS)
    rows, err = listed(url, "--status", "done,error,interrupted,pending")
    by_key = {r["key"]: r for r in rows}
    assert set(by_key) == set(AGES) and "1 thread(s)" in err
    assert 399 * DAY < _age(by_key["acme:_:iso-old"]) < 401 * DAY and _age(by_key["acme:_:upper-now"]) < DAY
