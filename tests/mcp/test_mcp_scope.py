"""``symfonic mcp``'s tenant scope on every store kind, against keys built to escape it: another
tenant's key, case twins, a tenant that is a prefix of another, a sub-tenant outside the grant,
look-alikes a collation could fold, and (MongoDB) collections whose default collation folds case.
A key outside the scope is answered exactly as a missing key is; no answer carries another
tenant's words."""

from __future__ import annotations

import pytest

from tests.conftest import backend_for
from tests.support.mcp_session import error_line, in_memory

INSIDE = ["acme:_:s-1", "acme:eu:s-2"]  # granted: --tenant acme --sub-tenant eu --sub-tenant _
OUTSIDE = [
    "acme:us:s-3",  # a sub-tenant outside the grant
    "ACME:_:s-1", "Acme:eu:s-2",  # case twins
    "acmex:_:s-4", "acme-eu:_:s-2", "acm:_:s-5",  # prefixes either way
    "acme\u0301:_:s-1", "\uff41cme:_:s-1", "acme\u200b:eu:s-2",  # look-alikes a collation may fold
    "acme",  # a key of no three parts
]
SINGLE_KEY_TOOLS = ["get_transcript", "get_thread_state", "get_history", "diff_checkpoints", "compat_report"]


def _said(key: str) -> str:
    return f"words of thread {key} only"


def _store(kind: str, request) -> str:
    from langchain_core.messages import HumanMessage

    from tests.support.scenarios import agent_graph

    backend = backend_for(kind, request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        graph = agent_graph().compile(checkpointer=saver)
        for key in INSIDE + OUTSIDE:
            for turn in range(2):
                graph.invoke({"messages": [HumanMessage(content=f"{_said(key)} {turn}")]}, {"configurable": {"thread_id": key}})
    return url


def _keys(result) -> list[str]:
    assert not result.is_error, result.content
    return sorted({row["key"] for row in result.structured_content["result"]})


@pytest.mark.parametrize("kind", ["sqlite", "postgres", "mongodb"])
def test_a_scoped_session_sees_exactly_its_grant(kind, request):
    url = _store(kind, request)
    grant = {"tenants": ("acme",), "sub_tenants": ("eu", "_")}
    listing = [
        ("list_threads", {}),
        ("list_threads", {"tenant": "ACME"}),
        ("list_threads", {"tenant": "acme", "sub_tenant": "us"}),
        ("list_threads", {"sub_tenant": "us"}),
        ("list_threads", {"tenant": "acmex"}),
        ("list_threads", {"sub_tenant": "eu", "with_size": True, "status": ["done"]}),
        ("search_messages", {"text": "words of thread"}),
        ("search_messages", {"text": "thread ACME", "tenant": "acme", "case_sensitive": True}),
        ("compat_report", {}),
        ("store_usage", {}),
    ]
    results = in_memory(url, listing, **grant)
    assert _keys(results[0]) == sorted(INSIDE)
    assert [_keys(r) for r in results[1:5]] == [[], [], [], []]
    assert _keys(results[5]) == ["acme:eu:s-2"]
    assert _keys(results[6]) == sorted(INSIDE)
    assert _keys(results[7]) == []  # the twins' own words are outside
    assert sorted(r["thread"] for r in results[8].structured_content["result"]) == sorted(INSIDE)
    assert sorted(t["key"] for t in results[9].structured_content["result"]["largest_threads"]) == sorted(INSIDE)
    for result in results:
        text = result.content[0].text
        assert not any(_said(k) in text for k in OUTSIDE), text[:200]
    # One key: outside the grant reads exactly as missing.
    missing = ["acme:eu:nope", "acme:_:s-1 ", "acme:_:S-1"]
    calls = [(tool, {"key": key}) for tool in SINGLE_KEY_TOOLS for key in OUTSIDE + missing]
    answers = in_memory(url, calls, **grant)
    for (tool, args), result in zip(calls, answers):
        shown = args["key"].replace("\u200b", "\\u200b")  # an invisible character is shown escaped
        assert error_line(result) == f"Error executing tool {tool}: no thread '{shown}' in this store", (tool, args)
    inside = in_memory(url, [(tool, {"key": key}) for tool in SINGLE_KEY_TOOLS for key in INSIDE], **grant)
    assert [r.is_error for r in inside] == [False] * len(inside)
    # Without a sub-tenant grant, acme's every sub-tenant and still no other tenant.
    wide = in_memory(url, [("list_threads", {}), ("get_transcript", {"key": "acme:us:s-3"})], tenants=("acme",))
    assert _keys(wide[0]) == sorted(INSIDE + ["acme:us:s-3"]) and not wide[1].is_error
    # Two tenants: both listings, newest first.
    two = in_memory(url, [("list_threads", {})], tenants=("acme", "ACME"), sub_tenants=("_",))
    rows = two[0].structured_content["result"]
    assert sorted(r["key"] for r in rows) == ["ACME:_:s-1", "acme:_:s-1"]
    assert [r["last_activity"] for r in rows] == sorted((r["last_activity"] for r in rows), reverse=True)


def test_case_folding_default_collation_on_mongodb_keeps_the_twin_out(request):
    from tests.stores.test_mongodb_trust import KEY, MINE, THEIRS, TWIN, _twins_store, default_collations_applied

    mongo = backend_for("mongodb", request)
    url = _twins_store(mongo)
    calls = [
        ("list_threads", {}),
        ("get_transcript", {"key": KEY}),
        ("get_transcript", {"key": TWIN}),
        ("search_messages", {"text": "second person"}),
        ("get_history", {"key": KEY}),
        ("store_usage", {}),
    ]
    with default_collations_applied():  # as a real mongod applies a collection's default collation
        lower = in_memory(url, calls, tenants=("acme",))
        upper = in_memory(url, [("list_threads", {}), ("get_transcript", {"key": KEY}), ("search_messages", {"text": "first person"})],
                          tenants=("ACME",))
    assert _keys(lower[0]) == [KEY]
    contents = [r["content"] for r in lower[1].structured_content["result"]]
    assert MINE in contents and not any(THEIRS in c for c in contents)
    assert error_line(lower[2]).endswith(f"no thread '{TWIN}' in this store")
    assert lower[3].structured_content["result"] == []
    mine = len(lower[4].structured_content["result"])
    assert [t["key"] for t in lower[5].structured_content["result"]["largest_threads"]] == [KEY]
    assert _keys(upper[0]) == [TWIN]
    assert error_line(upper[1]).endswith(f"no thread '{KEY}' in this store")
    assert upper[2].structured_content["result"] == []
    assert mine >= 1
