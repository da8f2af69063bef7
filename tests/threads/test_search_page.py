"""A page of ``threads search`` (``--limit``, the MCP tool's page) on a store that narrows: the walk
of the newest threads is bounded by its cost, then the store's one narrowing pass takes over."""

from __future__ import annotations

import pytest

from symfonic_cli.location import parse_location
from symfonic_cli.search import run as search_run
from symfonic_cli.search.run import search
from symfonic_cli.stores import open_store

THREADS = 300
PADDING = "lorem ipsum dolor sit amet " * 2000


@pytest.fixture(scope="module")
def store():
    from langchain_core.messages import HumanMessage
    from langgraph.graph import START, MessagesState, StateGraph

    from tests.support.backends import get

    backend = get("sqlite")
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        b = StateGraph(MessagesState)
        b.add_node("noop", lambda state: {})
        b.add_edge(START, "noop")
        graph = b.compile(checkpointer=saver)
        for i in range(THREADS):  # the first written is the oldest: the last in the listing
            # Long texts: reading one thread's latest checkpoint costs what it does on a real store.
            text = ("hello, where is the rare-walrus? " if i == 0 else f"hello from thread {i} ") + PADDING
            graph.invoke({"messages": [HumanMessage(content=text, id=f"m-{i}")]}, {"configurable": {"thread_id": f"acme:_:s-{i:03d}"}})
    return url


def _page_reads(url, needle, limit):
    """The page, the whole search's first ``limit`` threads, and the threads read one by one (the
    walk's byte test, and a hit's transcript)."""
    with open_store(parse_location(url)) as st:
        whole = list(search(st, needle))
        first = list(dict.fromkeys(h.key for h in whole))[:limit]
        reads: list[str] = []
        own = st.read_message_state

        def counted(key, **kw):
            reads.append(key)
            return own(key, **kw)

        st.read_message_state = counted  # the real read, counted
        page = list(search(st, needle, limit=limit))
    return page, [h for h in whole if h.key in first], reads


def test_a_rare_texts_page_reads_few_threads_before_the_store_narrows(store, monkeypatch):
    monkeypatch.setattr(search_run, "WALK_FLOOR", 0.0)
    page, expected, reads = _page_reads(store, "rare-walrus", 1)
    assert [h.key for h in page] == ["acme:_:s-000"] and page == expected
    # Unbounded, the walk read every thread before finding the oldest (see below); bounded by half
    # the listing's first-row wait it reads a handful (the narrowing reads no thread by itself).
    assert len(set(reads)) < THREADS // 3, len(set(reads))


def test_the_walk_is_what_the_bound_stops(store, monkeypatch):
    monkeypatch.setattr(search_run, "WALK_FLOOR", 60.0)
    page, expected, reads = _page_reads(store, "rare-walrus", 1)
    assert page == expected and len(set(reads)) == THREADS


def test_a_common_texts_page_comes_from_the_newest_threads_alone(store, monkeypatch):
    monkeypatch.setattr(search_run, "WALK_FLOOR", 0.0)
    page, expected, reads = _page_reads(store, "hello", 2)
    assert page == expected and [h.key for h in page] == [f"acme:_:s-{THREADS - 1}", f"acme:_:s-{THREADS - 2}"]
    assert set(reads) == {h.key for h in page}


def test_the_callers_time_between_hits_is_not_the_walks(store, monkeypatch):
    # A reader that takes its time over each hit (a terminal, an MCP client) does not cut the walk
    # short: the page still comes from the newest threads, the store never narrowing.
    import time

    # A budget of 0.3 s: three threads' reads fit in it, the caller's 0.9 s would not.
    monkeypatch.setattr(search_run, "WALK_FLOOR", 0.2)
    narrowed: list[bool] = []
    with open_store(parse_location(store)) as st:
        own = st.search_candidates

        def counted(pre, **kw):
            def scan():
                narrowed.append(True)
                yield from own(pre, **kw)
            return scan()

        st.search_candidates = counted  # the real narrowing, its pass noted
        keys = []
        for hit in search(st, "hello", limit=3):
            keys.append(hit.key)
            time.sleep(0.3)
    assert keys == [f"acme:_:s-{THREADS - n}" for n in (1, 2, 3)] and narrowed == []
