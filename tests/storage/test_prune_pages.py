"""A prune at scale plans a page of threads at a time (issue #45 item 7): the plans of a page are
the plans of its threads one by one, and a sweep of every thread (or a tenant's) reads no thread's
activity one by one to page or count them. Stores are written by the real graphs and savers; the
odd-id threads have their ids rewritten as other writers form them (tests/support/rewritten_ids.py).
"""

from __future__ import annotations

import operator
from datetime import datetime, timedelta, timezone
from typing import Annotated, TypedDict

import pytest

from symfonic_cli import clock

from tests.support.rewritten_ids import rewrite_ids
from tests.storage.test_prune import _keys, _new_store, _open

RULES = ({"keep": 1}, {"keep": 2}, {"keep": 1, "keep_branches": True})


class _SendState(TypedDict):
    items: list[str]
    done: Annotated[list[str], operator.add]


def _write_sends(saver, key: str) -> None:
    """A thread whose graph fans out with Send: its checkpoints carry ``__pregel_tasks`` writes."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Send

    graph = StateGraph(_SendState)
    graph.add_node("work", lambda state: {"done": [state["items"][0].upper()]})
    graph.add_conditional_edges(START, lambda state: [Send("work", {"items": [i], "done": []}) for i in state["items"]], ["work"])
    graph.add_edge("work", END)
    app = graph.compile(checkpointer=saver)
    for turn in ("ab", "cde"):
        app.invoke({"items": list(turn), "done": []}, {"configurable": {"thread_id": key}})


def _plan_view(p) -> tuple:
    return (p.key, p.rows, p.bytes, p.checkpoints_before, p.detached, p.delta_ancestors, p.skipped, p.redated, p.branch_heads_deleted)


@pytest.mark.postgres  # reached through _new_store("postgres", ...), which the marker rules do not follow
def test_postgres_plans_of_a_page_are_the_plans_one_by_one(request):
    """Every thread of the graphs' store (subgraphs, Sends' task writes, forks, a DeltaChannel thread)
    planned in one page and one by one: the same facts, the same rows and bytes to delete."""
    backend, url = _new_store("postgres", request)
    with backend.saver(url) as saver:
        _write_sends(saver, "acme:_:sends")
    keys = _keys(url)
    assert len(keys) > 5
    with _open(url, writable=False) as st:
        page = st._pr_facts_many(keys)
        assert page == {k: st._pr_facts(k) for k in keys}
        assert page["acme:_:sends"][1]  # the Sends' task writes, read by the page's statement
        for rule in RULES:
            many = [_plan_view(p) for p in st.prune_plans(keys, **rule)]
            assert many == [_plan_view(st.prune_plans([k], **rule)[0]) for k in keys]
            assert sum(v[1].get("checkpoint_blobs", 0) for v in many) > 0  # blobs no kept checkpoint names go


@pytest.mark.parametrize("kind", ["sqlite", "postgres", "mongodb"])
def test_a_sweep_without_time_bounds_reads_no_thread_one_by_one(kind, request):
    """Paging and counting every thread (or a tenant's) takes the odd-id threads as they are: no
    thread's checkpoints are read to date it. With a time window they are dated (and the undatable
    one left out)."""
    backend, url = _new_store(kind, request)
    keys = sorted(_keys(url), key=lambda k: k.encode())
    odd = keys[:3]
    for key, form in zip(odd, ("upper", "iso", "undatable")):
        rewrite_ids(backend.kind, url, key, form)
    with _open(url, writable=False) as st:
        reads: list[str] = []
        for name in ("iter_checkpoint_heads", "_every_form_heads"):
            real = getattr(st, name, None)
            if real is not None:
                setattr(st, name, lambda key, _real=real: (reads.append(key), _real(key))[1])
        assert st.window_count() == len(keys)
        assert st.window_keys(limit=len(keys) + 10) == keys
        assert st.window_keys(limit=2) == keys[:2] and st.window_keys(after=keys[1], limit=100) == keys[2:]
        tenant = keys[0].split(":")[0]
        mine = [k for k in keys if k.startswith(tenant + ":")]
        assert st.window_count(tenant=tenant) == len(mine) and st.window_keys(tenant=tenant, limit=1000) == mine
        assert reads == []
        cut = clock.id_at(datetime.now(timezone.utc) + timedelta(days=1))
        assert odd[2] not in st.window_keys(last_before=cut, limit=1000)  # the undatable thread: never in a window
        assert st.window_count(last_before=cut) == len(keys) - 1
        assert set(reads) >= set(odd)  # dated one by one where a window asks
