"""``thread diff``'s text reads standard messages from their stored fields (issue #37: no import of
langchain_core); on every store kind it finds exactly the changes the built values give, for every
pair of a thread's root checkpoints (forks, rewrites, an edit in place, DeltaChannel threads)."""

from __future__ import annotations

import itertools

import pytest

from symfonic_cli.history.diff import diff_checkpoints
from symfonic_cli.location import parse_location
from symfonic_cli.stores import open_store
from tests.thread.test_history import INPLACE, KEYS, _history, _store
from tests.support.cli import imports_of


def _seen(d) -> dict:
    """What the text and table show of a diff."""
    def msgs(ms):
        return [(m.message_id, m.role, m.content, m.before_role, m.before_content) for m in ms]

    return {"points": (d.a.checkpoint_id, d.a.checkpoint_ns, d.a.ts, d.b.checkpoint_id, d.b.checkpoint_ns, d.b.ts),
            "channels": (d.added, d.removed, d.changed), "added": msgs(d.messages_added),
            "removed": msgs(d.messages_removed), "edited": msgs(d.messages_edited), "warnings": d.warnings}


def _pairs(url: str, key: str) -> list[tuple[str, str]]:
    root = [e["checkpoint_id"] for e in _history(url, key, "--namespace", "")]
    return list(itertools.permutations(root[:6], 2)) + [(root[-1], root[0])]


@pytest.mark.parametrize("key", KEYS)
def test_lean_diff_finds_what_the_built_diff_finds(any_kind, key):
    from symfonic_cli.codec.plain import StoredMessage

    url = _store(any_kind)
    unbuilt = 0
    with open_store(parse_location(url)) as st:
        for a, b in _pairs(url, key):
            lean = diff_checkpoints(st, key, a, b, lean=True)
            assert _seen(lean) == _seen(diff_checkpoints(st, key, a, b)), (a, b)
            unbuilt += sum(type(m.value) is StoredMessage for m in lean.messages_added + lean.messages_removed)
    assert unbuilt > 0  # the lean path was taken, not only its fallback


def test_lean_diff_on_delta_channel_threads(tmp_path):
    from langgraph.checkpoint.sqlite import SqliteSaver

    from tests.support.delta_scenarios import DELTA_KEYS, write_delta_scenarios

    path = tmp_path / "delta.db"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        write_delta_scenarios(saver, 3)
    with open_store(parse_location(str(path))) as st:
        for key in DELTA_KEYS:
            for a, b in _pairs(str(path), key):
                assert _seen(diff_checkpoints(st, key, a, b, lean=True)) == _seen(diff_checkpoints(st, key, a, b)), (key, a, b)


def test_an_edit_in_place_is_built_and_shown(any_kind):
    """Stored fields cannot say whether an edited message equals its old self: both are built."""
    url = _store(any_kind)
    update = [e for e in _history(url, INPLACE, "--namespace", "") if e["rewrote"]][0]
    with open_store(parse_location(url)) as st:
        d = diff_checkpoints(st, INPLACE, update["parent_checkpoint_id"], update["checkpoint_id"], lean=True)
    assert [(m.message_id, m.before_content, m.content) for m in d.messages_edited] == [("e-1", "original", "edited")]
    assert type(d.messages_edited[0].value).__name__ == "HumanMessage"


def test_diff_text_imports_no_langchain_core(sqlite_master):
    out, loaded, code = imports_of(["thread", "diff", "-s", str(sqlite_master), "acme:_:s-001", "-3", "-1"],
                                   ("langchain_core", "langsmith", "pydantic"))
    assert "message added" in out and (loaded, code) == ([], 0), out[-600:]
