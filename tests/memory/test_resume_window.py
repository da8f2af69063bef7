"""``transcript show --resume-window``, ``Store.resume_window`` and ``thread show``'s restart line
against symfonic-core's own restart-resume, on stores real SymfonicAgents wrote (with the default
compaction firing), on every store kind (tests/support/agent_stores.py)."""

from __future__ import annotations

import json

import pytest

import symfonic_cli
from tests.support import agent_stores as ag
from tests.support.cli import run

KINDS = ("sqlite", "postgres", "mongodb")
SIZES = (1, 3, 10, 1000)


def _window(url: str, key: str, *args: str) -> list[dict]:
    r = run("transcript", "show", "-s", url, "-t", key, "--resume-window", *args, "-f", "json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_compaction_fired_in_the_long_thread(agent_stores):
    _backend, url = agent_stores("sqlite")
    r = run("transcript", "show", "-s", url, "-t", ag.LONG, "-f", "json")
    rows = json.loads(r.out)
    assert any(row["role"] == "system" and "[Conversation Summary]" in row["content"] for row in rows)
    assert not any("question 0 from" in row["content"] for row in rows)  # removed from the state


@pytest.mark.parametrize("kind", KINDS)
def test_rows_are_what_rehydrate_from_messages_replays(kind, agent_stores):
    backend, url = agent_stores(kind)
    with backend.saver(url) as saver:
        for key in ag.THREADS:
            for n in SIZES:
                want = ag.rehydrated(saver, key, n)
                assert want, (key, n)
                got = _window(url, key, "--max-entries", str(n))
                assert [{k: row[k] for k in ("speaker", "turn_id", "content")} for row in got] == want, (kind, key, n)
            assert [{k: r[k] for k in ("speaker", "turn_id", "content")} for r in _window(url, key)] == ag.rehydrated(saver, key, 10)


@pytest.mark.parametrize("kind", KINDS)
def test_timestamps_are_the_transcripts(kind, agent_stores):
    _backend, url = agent_stores(kind)
    for key in ag.THREADS:
        shown = {row["message_id"]: row["timestamp"] for row in json.loads(run("transcript", "show", "-s", url, "-t", key, "-f", "json").out)}
        rows = _window(url, key, "--max-entries", "1000")
        assert rows and all(row["timestamp"] is not None and row["timestamp"] == shown[row["turn_id"]] for row in rows)


@pytest.mark.parametrize("kind", KINDS)
def test_python_api_and_thread_show_agree(kind, agent_stores):
    backend, url = agent_stores(kind)
    with backend.saver(url) as saver, symfonic_cli.open_store(url) as store:
        for key in ag.THREADS:
            for n in SIZES:
                rows = store.resume_window(key, max_entries=n)
                assert [{"speaker": r.speaker, "turn_id": r.turn_id, "content": r.content} for r in rows] == ag.rehydrated(saver, key, n)
                assert [r.to_json() for r in rows] == _window(url, key, "--max-entries", str(n))
            shown = json.loads(run("thread", "show", "-s", url, "-t", key, "-f", "json").out)["restart_recalls"]
            window = store.resume_window(key)
            assert shown == {"turns": len(window), "last_at": window[-1].to_json()["timestamp"], "reason": None}


def test_blank_and_block_replies_follow_symfonic_core(agent_stores):
    _backend, url = agent_stores("sqlite")
    seen = {"blank": 0, "blocks": 0}
    for key in ag.THREADS:
        transcript = json.loads(run("transcript", "show", "-s", url, "-t", key, "-f", "json").out)
        window = {r["turn_id"]: r for r in _window(url, key, "--max-entries", "1000")}
        for r in transcript:
            if r["role"] == "assistant" and not r["content"].strip():
                seen["blank"] += 1
                assert r["message_id"] not in window  # a blank reply is no turn
            elif r["role"] == "assistant" and "[image_url]" in r["content"]:
                seen["blocks"] += 1  # text blocks joined, the image dropped, stripped
                assert window[r["message_id"]]["content"] == r["content"].replace("[image_url]", "").strip()
    assert seen["blank"] and seen["blocks"]  # the script's odd replies are in the store


def test_usage_errors_and_nothing_recalled(agent_stores, tmp_path):
    _backend, url = agent_stores("sqlite")
    for args in (("--max-entries", "3"), ("--resume-window", "--index", "0"), ("--resume-window", "--tools"), ("--resume-window", "--tail", "2"), ("--resume-window", "--around", "1"),
                 ("--resume-window", "--max-entries", "-1"), ("--resume-window", "--max-entries", "x")):
        r = run("transcript", "show", "-s", url, "-t", ag.SHORT, *args)
        assert r.code == 2 and r.err.count("\n") == 1 and "Traceback" not in r.err, (args, r.err)
    r = run("transcript", "show", "-s", url, "-t", ag.SHORT, "--resume-window", "--max-entries", "0", "-f", "json")
    assert (r.code, json.loads(r.out)) == (0, []) and "recalls nothing" in r.err
    r = run("transcript", "show", "-s", url, "-t", "acme:_:nobody", "--resume-window")
    assert r.code == 3
