"""``api.rewind`` and ``api.plan_rewind`` + ``execute`` (issue 48 item 6): a plan changes nothing and
equals the dry run; execute needs ``yes=True``, writes a copy of exactly the planned checkpoint, and
nothing when the thread was written after the plan (HeadMoved, exit 13); the thread chosen by key or
by tenant and session, as every one-thread command."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from symfonic_cli import api
from symfonic_cli.errors import HeadMoved, NotConfirmedError, UsageError
from tests.conftest import backend_for
from tests.support import run_state_scenarios as rs
from tests.support.rewind_scenarios import cfg, write

KEY = "acme:_:react-sy"


def _store(request, kind="sqlite"):
    backend = backend_for(kind, request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        write(saver, "plain")
    return backend, url


def _ids(backend, url):
    with backend.saver(url) as saver:
        return [s.config["configurable"]["checkpoint_id"] for s in rs.react_graph().compile(checkpointer=saver).get_state_history(cfg(KEY))]


def test_a_plan_changes_nothing_and_execute_writes_exactly_it(request):
    backend, url = _store(request)
    before = _ids(backend, url)
    plan = api.plan_rewind(url, KEY, to="-4", idle_for="0")
    assert plan.dry_run and plan.changes == (KEY,) and plan.threads[0]["target"]["checkpoint_id"] == before[3]
    assert _ids(backend, url) == before
    with pytest.raises(NotConfirmedError):
        api.execute(plan)
    assert _ids(backend, url) == before
    done = api.execute(plan, yes=True)
    [t] = done.threads
    assert t["status"] == "rewound" and t["copy_of"] == before[3] and t["from_head"] == before[0]
    assert _ids(backend, url) == [t["new_checkpoint_id"], *before]


def test_execute_writes_nothing_when_the_thread_was_written_after_the_plan(request):
    backend, url = _store(request)
    plan = api.plan_rewind(url, tenant="acme", session="react-sy", to="-4", idle_for="0")
    with backend.saver(url) as saver:
        rs.react_graph().compile(checkpointer=saver).invoke({"messages": [HumanMessage(content="again", id="x")]}, cfg(KEY))
    written = _ids(backend, url)
    with pytest.raises(HeadMoved) as info:
        api.execute(plan, yes=True)
    assert info.value.exit_code == 13
    assert _ids(backend, url) == written


def test_the_thread_is_given_once(request):
    _, url = _store(request)
    with pytest.raises(UsageError):
        api.rewind(url, KEY, thread=KEY, to="-2", idle_for="0", yes=True)
    with pytest.raises(UsageError):
        api.rewind(url, to="-2", idle_for="0", yes=True)
    with pytest.raises(UsageError):
        api.rewind(url, KEY, idle_for="0", yes=True)  # no target
