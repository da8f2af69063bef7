"""Plans and reports date a thread as threads list does: by instant, never by the string order of
its ids (clock.py; issue 33, the review of issue 37), on every store kind.

Threads are written by the real graph and saver 30 days ago (LangGraph's clock moved back,
tests/support/old_threads.py), then their ids rewritten into the forms other writers use
(tests/support/rewritten_ids.py): UUIDv6 in lower, upper and mixed case, an upper-case-lettered
UUIDv6 sorting between two lowercase ids and latest by its time, ISO 8601 strings, ids without a
time and no ``ts``. The erase plan (one thread, a tenant, a sweep), the prune plan and ``thread
show`` must give each thread the first and last activity ``threads list`` gives it.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from tests.support.cli import run
from tests.support.old_threads import write_aged
from tests.support.rewritten_ids import BETWEEN_ID, rewrite_ids

DAY = timedelta(days=1)
FORMS = ("plain", "upper", "mixed", "iso", "between", "undatable")


def _key(form: str) -> str:
    return f"acme:_:{form}"


@pytest.fixture(scope="module")
def forms(shared_kind):  # only read (plans are dry runs)
    url = shared_kind.new_store(scenarios=False)
    write_aged(shared_kind, url, {_key(f): 30 * DAY for f in FORMS})
    for form in FORMS:
        if form != "plain":
            rewrite_ids(shared_kind.kind, url, _key(form), form)
    return shared_kind, url


def _json(*args: str):
    r = run(*args, "-f", "json")
    assert r.code == 0, (args, r.err)
    return json.loads(r.out)


def _listed(url: str) -> dict[str, tuple]:
    return {t["key"]: (t["first_activity"], t["last_activity"]) for t in _json("threads", "list", "-s", url)}


def test_the_listing_dates_every_form(forms):
    """The reference the plans are held to: every datable form dated, the between id latest."""
    from symfonic_cli.clock import checkpoint_id_time, iso_utc

    _, url = forms
    listed = _listed(url)
    assert set(listed) == {_key(f) for f in FORMS}
    assert listed[_key("undatable")] == (None, None)
    assert listed[_key("between")][1] == iso_utc(checkpoint_id_time(BETWEEN_ID))
    for form in ("plain", "upper", "mixed", "iso"):
        first, last = listed[_key(form)]
        assert first is not None and last is not None and first < last, form


def test_erase_plans_date_by_instant(forms):
    _, url = forms
    listed = _listed(url)
    # One thread at a time, several at once (PostgreSQL plans a batch in one statement), a sweep.
    for form in FORMS:
        plan = _json("thread", "erase", "-s", url, "-t", _key(form), "--dry-run")
        (t,) = plan["threads"]
        assert (t["first_activity"], t["last_activity"]) == listed[_key(form)], form
    every = [arg for form in FORMS for arg in ("-t", _key(form))]
    batch = _json("thread", "erase", "-s", url, *every, "--dry-run")
    assert {t["key"]: (t["first_activity"], t["last_activity"]) for t in batch["threads"]} == listed
    sweep = _json("thread", "erase", "-s", url, "--inactive-for", "1d", "--dry-run")
    swept = {t["key"]: (t["first_activity"], t["last_activity"]) for t in sweep["threads"]}
    # The between thread's ids date it in 2038 (tests/support/rewritten_ids.py): not idle.
    assert swept == {k: v for k, v in listed.items() if k not in (_key("undatable"), _key("between"))}
    # The text plan shows the same instants.
    text = run("thread", "erase", "-s", url, "-t", _key("between"), "--dry-run")
    assert text.code == 0 and f"last {listed[_key('between')][1]}" in text.out, text.out


def test_prune_plan_last_activity_is_the_listings(forms):
    _, url = forms
    listed = _listed(url)
    for args in (("--all",), ("--all", "--older-than", "10d"), ("--inactive-for", "1d")):
        plan = _json("thread", "prune", "-s", url, *args, "--dry-run")
        got = {t["key"]: t["last_activity"] for t in plan["threads"]}
        every = "--inactive-for" not in args  # a sweep leaves the undatable and the 2038 (between) threads
        want = {k: v[1] for k, v in listed.items() if every or k not in (_key("undatable"), _key("between"))}
        assert got == want, args


def test_thread_show_dates_by_instant(forms):
    _, url = forms
    listed = _listed(url)
    for form in FORMS:
        shown = _json("thread", "show", "-s", url, _key(form))
        assert (shown["first_activity"], shown["last_activity"]) == listed[_key(form)], form


def _blob_copy(path: str, key: str, as_key: str) -> None:
    """Every row of ``key`` copied under ``as_key`` stored as a BLOB of its UTF-8 bytes (a writer
    binding bytes), as tests/erase/test_erase_exact.py makes them."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        conn.execute("INSERT INTO checkpoints SELECT CAST(? AS BLOB), checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
                     "checkpoint, metadata FROM checkpoints WHERE thread_id = ?", (as_key, key))
        conn.execute("INSERT INTO writes SELECT CAST(? AS BLOB), checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, "
                     "task_path FROM writes WHERE thread_id = ?", (as_key, key))
        conn.commit()
    finally:
        conn.close()


def test_a_key_stored_as_a_blob_is_dated_by_instant(_sqlite_backend):
    """SQLite only (a thread_id of another type is no key on PostgreSQL or MongoDB): the listing
    merges a key's text and BLOB rows (stores/sqlite/blobkeys.py ``_merged_by_key``); its activity is
    read from the checkpoints of both forms, by instant, in the listing, its windows, a sweep and
    the plans, never from the string order of the ids or from the text rows alone."""
    backend = _sqlite_backend
    url = backend.new_store(scenarios=False)
    write_aged(backend, url, {_key(f): 30 * DAY for f in ("iso", "mixed", "plain")})
    rewrite_ids("sqlite", url, _key("iso"), "iso")
    rewrite_ids("sqlite", url, _key("mixed"), "mixed")
    for form in ("iso", "mixed", "plain"):
        _blob_copy(url, _key(form), f"acme:_:blob-{form}")
    listed = _listed(url)
    for form in ("iso", "mixed", "plain"):
        assert listed[f"acme:_:blob-{form}"] == listed[_key(form)] != (None, None), form
    idle = {t["key"] for t in _json("threads", "list", "-s", url, "--inactive-for", "10d")}
    assert idle == set(listed)
    assert not _json("threads", "list", "-s", url, "--active-within", "10d")
    sweep = _json("thread", "erase", "-s", url, "--inactive-for", "10d", "--dry-run")
    assert {t["key"]: (t["first_activity"], t["last_activity"]) for t in sweep["threads"]} == listed
    plan = _json("thread", "prune", "-s", url, "--all", "--dry-run")
    assert {t["key"]: t["last_activity"] for t in plan["threads"]} == {k: v[1] for k, v in listed.items()}


def test_search_lists_threads_in_the_listings_order(any_kind):
    """Search answers thread by thread in the listing's order (newest activity first): an ISO 8601
    id ("2025-...") sorts after every lowercase UUIDv6 ("1f...") as a string, whatever its time."""
    url = any_kind.new_store(scenarios=False)
    write_aged(any_kind, url, {"acme:_:iso-old": 400 * DAY, "acme:_:plain-now": timedelta(0), "acme:_:plain-old": 200 * DAY})
    rewrite_ids(any_kind.kind, url, "acme:_:iso-old", "iso")
    order = [t["key"] for t in _json("threads", "list", "-s", url)]
    assert order == ["acme:_:plain-now", "acme:_:plain-old", "acme:_:iso-old"]
    hits = _json("threads", "search", "-s", url, "turn 0 of")
    seen = list(dict.fromkeys(h["key"] for h in hits))
    assert seen == order
