"""MongoDB's listing page (a page costs a page on SecantusDB): the odd threads dated a batch at a
time (``_keys_heads``) exactly as thread by thread, and a ``--limit`` page kept from the one
$group pass in the order the server's $sort gives, ties in the last id included."""

from __future__ import annotations

from symfonic_cli import clock
from tests.threads.test_activity_instant import FORMS, _store


def _open(url: str):
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    return open_store(parse_location(url))


def test_a_batch_of_heads_is_each_threads_heads(request):
    """Every checkpoint of the batch's keys with the ts thread_activity reads (where the id holds
    no time), a document whose key is an array holding a batch key left out; a batch holding a
    document of another shape gives None (each thread is then read alone)."""
    from tests.conftest import backend_for

    url = _store(backend_for("mongodb", request))
    with _open(url) as st:
        keys = sorted(t.key for t in st.list_threads())
        expected = sorted((k, h.checkpoint_id, None if clock.checkpoint_id_time(h.checkpoint_id) else h.ts)
                          for k in keys for h in st.iter_checkpoint_heads(k))
        assert any(ts is not None for _, _, ts in expected)  # the ISO-id threads' heads are read
        doc = st.checkpoints.find_one({"thread_id": "acme:_:iso-old"}, {"_id": 0})
        st.checkpoints.insert_one({**doc, "thread_id": ["acme:_:iso-old", "x"], "checkpoint_id": "array-key"})
        assert sorted(st._keys_heads(keys)) == expected
        assert {k for k, _, _ in st._keys_heads(["acme:_:iso-old"])} == {"acme:_:iso-old"}
        st.checkpoints.insert_one({**doc, "checkpoint_ns": None, "checkpoint_id": "no-namespace"})
        assert st._keys_heads(keys) is None
        assert st._keys_heads(["acme:_:plain-now"]) is not None
        # The listing dates that thread alone then: undatable (its document cannot be read as one).
        rows = {t.key: t for t in st.list_threads()}
        assert rows["acme:_:iso-old"].undatable and rows["acme:_:nodate"].undatable
        assert rows["acme:_:iso-now"].last_at is not None and not rows["acme:_:iso-now"].undatable


def test_a_page_with_ties_in_the_last_id_is_the_servers_order(request):
    """Threads sharing their last id (copies of one thread under other keys): each page is the
    server's $sort (last id descending, then key) and the start of the whole listing."""
    from symfonic_cli.stores.mongodb._common import A_KEY
    from tests.conftest import backend_for

    url = _store(backend_for("mongodb", request))
    with _open(url) as st:
        docs = list(st.checkpoints.find({"thread_id": "acme:_:plain-now"}, {"_id": 0}))
        for suffix in ("b", "a", "é", "Z", "0"):
            st.checkpoints.insert_many([{**d, "thread_id": f"acme:_:plain-now-{suffix}"} for d in docs])
        group = {"_id": "$thread_id", "n": {"$sum": 1}, "first": {"$min": "$checkpoint_id"}, "last": {"$max": "$checkpoint_id"}}
        whole = [t.key for t in st.list_threads()]
        plain_whole = [t[:5] for t in st._regex_rows(dict(A_KEY), group, None, None, None) if not t.odd]
        assert len(plain_whole) == 7 and len({t[3] for t in plain_whole}) == 2  # six threads tie
        for limit in range(1, len(whole) + 1):
            plain = [t[:5] for t in st._thread_rows(None, None, limit, None, None) if not t.odd]
            assert plain == plain_whole[:limit], limit
            assert [t.key for t in st.list_threads(limit=limit)] == whole[:limit], limit
        rows = list(st._thread_rows(None, None, None, None, None))
        assert {t.key for t in rows[:len(FORMS)]} == set(FORMS) and not any(t.odd for t in rows[len(FORMS):])
