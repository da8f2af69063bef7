"""``list_threads``' time window and order (``since``/``until``, ``sort``/``reverse``) and
``search_messages``' activity window (``inactive_for``/``inactive_since``/``active_within``) on
every store kind: each answers what ``threads list``/``threads search -f json`` and the Python API
answer on the same store, inside the granted scope; a bad value is the tool's one usage line."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

import symfonic_cli
from symfonic_cli.errors import UsageError
from symfonic_cli.mcp.answer import escaped
from tests.support.cli import run
from tests.support.mcp_session import error_line, in_memory

ACME = {"acme:_:s-001", "acme:eu:s-002", "acme:eu:s-003", "acme:_:s-rewrite"}


def _json(*args: str):
    r = run(*args, "-f", "json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def _iso(dt) -> str:
    return dt.isoformat().replace("+00:00", "Z")


@pytest.fixture
def store_url(any_kind):
    return any_kind.new_store()


def test_list_threads_since_until_sort_reverse_answer_what_threads_list_answers(store_url):
    with symfonic_cli.open_store(store_url) as st:
        acme = sorted(st.threads(tenant="acme"), key=lambda t: t.last_activity)
        # The window from the second oldest's last activity to the second newest's, both ends kept.
        lo, hi = acme[1].last_activity, acme[-2].last_activity
        by_instant = [t.to_json() for t in st.threads(tenant="acme", since=lo, until=hi)]
        by_text = [t.to_json() for t in st.threads(tenant="acme", since=_iso(lo), until=_iso(hi))]
        sorted_api = [t.to_json() for t in st.threads(tenant="acme", sort="checkpoints", reverse=True)]
    assert [t["key"] for t in by_instant] == [t.key for t in reversed(acme[1:-1])] and by_instant == by_text
    calls = [
        ("list_threads", {"since": _iso(lo), "until": _iso(hi)}),
        ("list_threads", {"since": _iso(lo)}),
        ("list_threads", {"until": _iso(hi)}),
        ("list_threads", {"sort": "checkpoints"}),
        ("list_threads", {"sort": "FIRST-activity", "reverse": True}),
        ("list_threads", {"reverse": True, "with_size": True}),
        ("list_threads", {"sort": "size", "since": "1h", "limit": 2}),
    ]
    results = in_memory(store_url, calls, tenants=("acme",))
    cli = [
        ("--since", _iso(lo), "--until", _iso(hi)), ("--since", _iso(lo)), ("--until", _iso(hi)),
        ("--sort", "checkpoints"), ("--sort", "FIRST-activity", "--reverse"), ("--reverse", "--with-size"),
        ("--sort", "size", "--since", "1h", "--limit", "2"),
    ]
    for (_name, args), result, options in zip(calls, results, cli):
        assert not result.is_error, (args, result.content)
        want = _json("threads", "list", "-s", store_url, "--tenant", "acme", *options)
        assert result.structured_content["result"] == escaped(want), args
        assert want and {t["key"] for t in want} <= ACME, args
    assert results[0].structured_content["result"] == escaped(by_instant)
    assert len(results[1].structured_content["result"]) == len(acme) - 1 == len(results[2].structured_content["result"])
    (reverse,) = in_memory(store_url, [("list_threads", {"sort": "checkpoints", "reverse": True})], tenants=("acme",))
    assert reverse.structured_content["result"] == escaped(sorted_api)


def test_list_threads_merges_several_grants_in_the_order_asked(store_url):
    """Two granted tenants: one listing each, merged as ``threads list`` orders their union."""
    orders = [{"sort": "checkpoints"}, {"sort": "size"}, {"sort": "first-activity", "reverse": True},
              {"sort": "size", "with_size": True, "reverse": True}]
    results = in_memory(store_url, [("list_threads", o) for o in orders], tenants=("acme", "globex"))
    for order, result in zip(orders, results):
        options = ["--sort", order["sort"]] + ["--reverse"] * order.get("reverse", False) + ["--with-size"] * order.get("with_size", False)
        union = [t for t in _json("threads", "list", "-s", store_url, *options) if t["tenant"] in ("acme", "globex")]
        assert result.structured_content["result"] == escaped(union), order
        assert {t["tenant"] for t in union} == {"acme", "globex"}
        assert ("size_bytes" in union[0]) is order.get("with_size", False)


def test_search_messages_activity_window_answers_what_threads_search_answers(store_url):
    with symfonic_cli.open_store(store_url) as st:
        acme = sorted(st.threads(tenant="acme"), key=lambda t: t.last_activity)
        cut = _iso(acme[2].last_activity)  # idle since: the two threads last active before it
        api = [h.to_json() for h in st.search("e", tenant="acme", inactive_since=cut)]
    calls = [("search_messages", {"text": "e", "inactive_since": cut}),
             ("search_messages", {"text": "e", "active_within": "1h"}),
             ("search_messages", {"text": "e", "inactive_for": "1h"}),
             ("search_messages", {"text": "e", "inactive_for": "0s", "limit": 3})]
    cli = [("--inactive-since", cut), ("--active-within", "1h"), ("--inactive-for", "1h"),
           ("--inactive-for", "0s", "--limit", "3")]
    results = in_memory(store_url, calls, tenants=("acme",))
    for (_name, args), result, options in zip(calls, results, cli):
        assert not result.is_error, (args, result.content)
        want = _json("threads", "search", "e", "-s", store_url, "--tenant", "acme", *options)
        assert result.structured_content["result"] == escaped(want), args
    assert results[0].structured_content["result"] == escaped(api)
    assert {h["key"] for h in api} == {t.key for t in acme[:2]}
    assert {h["key"] for h in results[1].structured_content["result"]} == ACME
    assert results[2].structured_content["result"] == []
    assert len({h["key"] for h in results[3].structured_content["result"]}) == 3  # --limit counts threads


def test_bad_filter_values_are_one_usage_line(store_url, tmp_path):
    log = tmp_path / "log.jsonl"
    calls = [
        ("list_threads", {"since": "yesterday-ish"}),
        ("list_threads", {"until": "2026-13-45"}),
        ("list_threads", {"since": "2026-12-02", "until": "2026-12-01"}),
        ("list_threads", {"since": "2h", "active_within": "1h"}),
        ("list_threads", {"sort": "loudest"}),
        ("list_threads", {"sort": "loudest", "tenant": "globex"}),  # outside the grant: still refused
        ("search_messages", {"text": "e", "inactive_for": "soon"}),
        ("search_messages", {"text": "e", "inactive_since": "never"}),
        ("search_messages", {"text": "e", "inactive_for": "1h", "inactive_since": "2026-12-01"}),
        ("list_threads", {"reverse": "sometimes"}),
    ]
    results = in_memory(store_url, calls, tenants=("acme",), log=log)
    lines = [error_line(r) for r in results]
    assert "yesterday-ish" in lines[0] and "is not a time" in lines[0]
    assert "2026-13-45" in lines[1] and "--since is after --until" in lines[2] and "not both" in lines[3]
    assert "unknown sort 'loudest'" in lines[4] and "last-activity" in lines[4] and lines[5] == lines[4]
    assert "soon" in lines[6] and "never" in lines[7] and "not both" in lines[8]
    assert "reverse" in lines[9] and "Traceback" not in lines[9]  # the SDK's schema refuses it before the tool runs
    for line in lines[:9]:
        assert "Traceback" not in line and "\n" not in line.strip()
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["outcome"] for r in records] == ["usage"] * 9 + ["refused"]


def test_the_api_checks_since_and_until(store_url):
    with symfonic_cli.open_store(store_url) as st:
        with pytest.raises(UsageError, match="since is a naive datetime"):
            st.threads(since=datetime(2026, 12, 1))
        with pytest.raises(UsageError, match="until must be a datetime or a string or None, not int"):
            st.threads(until=1764547200)
        with pytest.raises(UsageError, match="is not a time"):
            st.threads(until="soon")
        newest = max(t.last_activity for t in st.threads())
        assert [t.key for t in st.threads(since=newest)] == [t.key for t in st.threads(limit=1)]
        assert st.threads(since=newest + timedelta(microseconds=1)) == []
        # A timezone other than UTC is the same instant.
        there = newest.astimezone(timezone(timedelta(hours=-5)))
        assert [t.key for t in st.threads(until=there)] == [t.key for t in st.threads()]
