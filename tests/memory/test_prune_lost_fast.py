"""The prune plan's count of messages held only in deleted checkpoints (prune/lost.py) takes a
quick pass that decodes nothing and stops when every deleted checkpoint's list is a prefix of a
kept one's. Side by side, it equals the count of every checkpoint decoded on its own, message by
message, over the scenario stores, a SymfonicAgent's store (compaction fired), DeltaChannel
stores and an encrypted store (with and without its key), on every kind, for several keep rules."""

from __future__ import annotations

import pytest

from symfonic_cli.errors import SymfonicError
from symfonic_cli.stores.messages import Delta, _delta_checkpoints, _plain_checkpoints, version_key
from symfonic_cli.location import parse_location
from symfonic_cli.prune.lost import messages_only_in_deleted
from symfonic_cli.stores import open_store
from tests.conftest import backend_for
from tests.support import agent_stores as ag
from tests.support import backends
from tests.support.delta_scenarios import DELTA_KEYS
from tests.support.scenarios import scenarios
from tests.transcript.test_encrypted import KEY, pair  # noqa: F401  # the encrypted stores, as a fixture

RULES = ({"keep": 1}, {"keep": 2}, {"keep": 1, "keep_branches": True}, {"keep": 3})


def _decoded_one_by_one(store, key: str, rule: dict) -> int:
    """Every checkpoint decoded whole, its messages' version keys as a set: the held-only-in-deleted count."""
    d = store.prune_decision(key, **rule)
    if d.skipped or not d.checkpoints:
        return 0
    deleted = {ns: set(ids) for ns, ids in d.delete.items()}
    try:
        checkpoints = list(_plain_checkpoints(store, key))
    except Delta:
        checkpoints = list(_delta_checkpoints(store, key))
    kept: set = set()
    gone: set = set()
    for cp in checkpoints:
        side = gone if cp.ns in d.drop or cp.cid in deleted.get(cp.ns, ()) else kept
        side |= {version_key(m) for m in cp.messages}
    return len(gone - kept)


def _both(url: str, keys) -> list[tuple[str, dict, int]]:
    counted = []
    with open_store(parse_location(url)) as store:
        for key in keys:
            for rule in RULES:
                fast = messages_only_in_deleted(store, key, **rule)
                assert fast == _decoded_one_by_one(store, key, rule), (url, key, rule)
                counted.append((key, rule, fast))
    return counted


@pytest.mark.parametrize("kind", backends.KINDS)
def test_scenario_and_agent_stores(kind, request, agent_stores):
    counted = _both(backend_for(kind, request).new_store(), [sc.key for sc in scenarios()])
    assert any(n for key, _, n in counted if key == "acme:_:s-rewrite")  # a RemoveMessage and a rewrite: lost
    assert not any(n for key, _, n in counted if key == "acme:_:s-001")  # append-only: the quick pass
    _backend, url = agent_stores(kind)
    counted = _both(url, list(ag.THREADS))
    assert any(n for key, _, n in counted if key == ag.LONG)  # compaction removed messages


def test_delta_channel_stores(delta_store):
    _backend, url, freq = delta_store
    counted = _both(url, DELTA_KEYS)
    if freq == 1:  # at 100 no snapshot: the prune keeps every ancestor, nothing is lost
        assert any(n for key, _, n in counted if key == "delta:_:remove")


def test_encrypted_stores_with_and_without_the_key(pair, monkeypatch):  # noqa: F811
    _backend, plain, enc = pair
    keys = [sc.key for sc in scenarios()]
    monkeypatch.setenv("LANGGRAPH_AES_KEY", KEY)
    assert [n for _, _, n in _both(enc, keys)] == [n for _, _, n in _both(plain, keys)]
    monkeypatch.delenv("LANGGRAPH_AES_KEY")
    with open_store(parse_location(enc)) as store:
        for key in keys:
            for rule in RULES:
                outcomes = []
                for count in (messages_only_in_deleted, _decoded_one_by_one):
                    try:
                        outcomes.append(count(store, key, **rule) if count is messages_only_in_deleted else count(store, key, rule))
                    except SymfonicError as exc:
                        outcomes.append((type(exc).__name__, exc.line()))
                assert outcomes[0] == outcomes[1], (key, rule, outcomes)
