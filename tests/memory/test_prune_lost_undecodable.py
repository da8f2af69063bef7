"""A message that is stored whole (its item skips cleanly) but does not decode (a string inside
it is not UTF-8) is still a message: when a prune deletes its last copy, the plan counts it.
Such items had one version key between them, so one kept copy of any of them hid every other the
prune deletes (0 lost). Now each is told apart by its stored bytes. Written by the real graph
through each kind's real saver, whose serializer stores the damage (and reads it back mended, so
LangGraph runs on); side by side with LangGraph's own listing of the checkpoints, in the clear and
encrypted (EncryptedSerializer)."""

from __future__ import annotations

import json

import pytest

from symfonic_cli.location import parse_location
from symfonic_cli.prune.lost import messages_only_in_deleted
from symfonic_cli.stores import open_store
from tests.conftest import backend_for
from tests.support import backends
from tests.support.cli import run
from tests.support.terminal import on_terminal
from tests.transcript.test_encrypted import KEY

MARK = b"UNDECODABLE-MARK"
DAMAGE = b"\xff" * len(MARK)  # the same length: the item's structure is whole
APPEND, REMOVED, ALONE = "u:_:append", "u:_:removed", "u:_:removed-alone"
RULES = ({"keep": 1}, {"keep": 2}, {"keep": 3})


class Damaging:
    """The saver's serializer, storing every MARK as bytes that are no UTF-8."""

    def __init__(self, serde) -> None:
        self.serde = serde

    def dumps_typed(self, obj):
        type_, data = self.serde.dumps_typed(obj)
        return type_, data.replace(MARK, DAMAGE) if isinstance(data, bytes) else data

    def loads_typed(self, pair):
        type_, data = pair
        return self.serde.loads_typed((type_, data.replace(DAMAGE, MARK) if isinstance(data, bytes) else data))

    def __getattr__(self, name):
        return getattr(self.serde, name)


def _write(saver) -> None:
    from langchain_core.messages import HumanMessage, RemoveMessage

    from tests.support.scenarios import agent_graph

    graph = agent_graph().compile(checkpointer=saver)
    mark = MARK.decode()
    a = {"configurable": {"thread_id": APPEND}}
    graph.invoke({"messages": [HumanMessage(content=f"{mark} one", id="a-1")]}, a)
    graph.invoke({"messages": [HumanMessage(content="plain two", id="a-2")]}, a)
    # Another undecodable message (and the echo of the removed one) stays: it hid the removed one.
    r = {"configurable": {"thread_id": REMOVED}}
    graph.invoke({"messages": [HumanMessage(content=f"{mark} gone", id="r-1")]}, r)
    graph.invoke({"messages": [HumanMessage(content=f"{mark} kept", id="r-2")]}, r)
    graph.update_state(r, {"messages": [RemoveMessage(id="r-1")]})
    s = {"configurable": {"thread_id": ALONE}}
    graph.invoke({"messages": [HumanMessage(content=f"{mark} gone", id="s-1")]}, s)
    graph.invoke({"messages": [HumanMessage(content="plain kept", id="s-2")]}, s)
    graph.update_state(s, {"messages": [RemoveMessage(id="s-1")]})


@pytest.fixture(scope="module", params=[(k, enc) for k in backends.KINDS for enc in (False, True)],
                ids=lambda p: f"{p[0]}{'-encrypted' if p[1] else ''}")
def damaged(request):
    kind, encrypted = request.param
    backend = backend_for(kind, request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        if encrypted:
            from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

            saver.serde = EncryptedSerializer.from_pycryptodome_aes(serde=Damaging(saver.serde), key=KEY.encode())
        else:
            saver.serde = Damaging(saver.serde)
        _write(saver)
    return backend, url, encrypted


def _by_langgraph(backend, url, encrypted, key: str, rule: dict) -> int:
    """The message ids LangGraph lists in the checkpoints the prune deletes and in none it keeps."""
    with open_store(parse_location(url)) as store:
        d = store.prune_decision(key, **rule)
    deleted = {ns: set(ids) for ns, ids in d.delete.items()}
    kept: set = set()
    gone: set = set()
    with backend.saver(url) as saver:
        inner = Damaging(saver.serde)
        if encrypted:
            from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

            saver.serde = EncryptedSerializer.from_pycryptodome_aes(serde=inner, key=KEY.encode())
        else:
            saver.serde = inner
        for t in saver.list({"configurable": {"thread_id": key}}):
            ns, cid = t.config["configurable"]["checkpoint_ns"], t.config["configurable"]["checkpoint_id"]
            side = gone if ns in d.drop or cid in deleted.get(ns, ()) else kept
            side |= {m.id for m in t.checkpoint["channel_values"].get("messages", [])}
    return len(gone - kept)


def test_the_stored_messages_do_not_decode(damaged, monkeypatch):
    _backend, url, encrypted = damaged
    if encrypted:
        monkeypatch.setenv("LANGGRAPH_AES_KEY", KEY)
    r = run("transcript", "show", "-s", url, APPEND, "-f", "json")
    assert r.code == 0, r.err
    assert MARK.decode() not in r.out and "plain two" in r.out  # the damaged one is shown from nothing


def test_an_undecodable_message_a_prune_deletes_is_counted(damaged, monkeypatch):
    backend, url, encrypted = damaged
    if encrypted:
        monkeypatch.setenv("LANGGRAPH_AES_KEY", KEY)
    with open_store(parse_location(url)) as store:
        for key, lost in ((APPEND, 0), (REMOVED, 1), (ALONE, 1)):
            assert messages_only_in_deleted(store, key, keep=1) == lost, (key, url)
            for rule in RULES:
                assert messages_only_in_deleted(store, key, **rule) == _by_langgraph(backend, url, encrypted, key, rule), (key, rule)
    plan = json.loads(run("thread", "prune", "-s", url, "--all", "--dry-run", "-f", "json").out)
    assert {t["key"]: t["messages_only_in_deleted"] for t in plan["threads"]} == {APPEND: 0, REMOVED: 1, ALONE: 1}


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("no_color", [False, True])
def test_the_plan_on_a_terminal_says_they_go(request, cols, no_color):
    backend = backend_for("sqlite", request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        saver.serde = Damaging(saver.serde)
        _write(saver)
    code, screen = on_terminal("thread", "prune", "-s", url, "--all", "--dry-run", "--no-pager", cols=cols,
                               env={"NO_COLOR": "1"} if no_color else None)
    assert code == 0, screen
    assert "gone for good: 2 message(s)" in " ".join(screen.split()), screen
