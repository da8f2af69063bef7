"""``symfonic browse`` on stores whose messages are a LangGraph ``DeltaChannel`` and on stores written
with LangGraph's ``EncryptedSerializer`` (the key given as symfonic takes it: ``LANGGRAPH_AES_KEY``
here, ``--aes-key-file`` in test_browse_cli.py), on every store kind: each screen shows what the
Python API answers for the same store. Without the key, what needs the decrypted messages is one
line on the screen, never ciphertext and never a traceback."""

from __future__ import annotations

import asyncio
import os
from unittest import mock

import pytest

import symfonic_cli
from symfonic_cli.browse.thread import DiffScreen, HistoryScreen, StateScreen, TranscriptScreen
from symfonic_cli.browse.threads import ThreadsScreen
from symfonic_cli.codec.cipher import KEY_ENV
from symfonic_cli.render import escape_inline
from symfonic_cli.vocabulary import STATUSES
from tests.support import backends
from tests.support.browser import browser, newest_plus, screen_text, settle
from tests.support.delta_scenarios import DELTA_KEYS, write_delta_scenarios
from tests.transcript.test_encrypted import KEY, _encrypted_serde


def _store(backend, *, encrypted: bool) -> str:
    """The shared scenarios and the DeltaChannel threads, all put through the kind's real saver
    (with the EncryptedSerializer when ``encrypted``; plainly, the scenarios are the backend's
    copy of its master, written by the same saver, and only the DeltaChannel threads are written)."""
    source = backend.new_store()
    if not encrypted:
        with backend.saver(source) as saver:
            write_delta_scenarios(saver, 3)
        return source
    url = backend.new_store(scenarios=False)
    with backend.saver(source) as src, backend.saver(url) as dst:
        dst.serde = _encrypted_serde(KEY)
        backends.copy_store(src, dst)
        write_delta_scenarios(dst, 3)
    return url


def _rows(app):
    return app.screen.query_one("#rows")


@pytest.mark.parametrize("encrypted", [False, True], ids=["delta", "encrypted-delta"])
def test_every_screen_on_delta_and_encrypted_stores(any_kind, encrypted):
    url = _store(any_kind, encrypted=encrypted)
    with mock.patch.dict(os.environ, {KEY_ENV: KEY} if encrypted else {}):
        if not encrypted:
            os.environ.pop(KEY_ENV, None)
        asyncio.run(_every_screen(url))


async def _every_screen(url: str) -> None:
    with symfonic_cli.open_store(url) as store:
        listed = store.threads(status=list(STATUSES))
        app = browser(store, now=newest_plus(store), store_arg=url)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            assert isinstance(app.screen, ThreadsScreen)
            keys = [r.key for r in _rows(app).items]
            assert keys == [t.key for t in store.threads()] and set(DELTA_KEYS) <= set(keys)
            assert {r.key: r.status for r in _rows(app).items} == {t.key: t.status for t in listed}
            # The first user message of the rows on the screen: decoded (and decrypted) as the API does.
            for row in _rows(app).items[:30]:
                first = store.transcript(row.key, speaker="user", index=0)
                assert row.first == (first[0].content if first else "")
            assert "question 0" in screen_text(app)
            for key in DELTA_KEYS:
                transcript = store.transcript(key)
                with_tools = store.transcript(key, tools=True)
                history = store.history(key)
                _rows(app).set_cursor(keys.index(key))
                await pilot.press("enter")
                await settle(pilot)
                assert isinstance(app.screen, TranscriptScreen) and app.screen.key == key
                assert [r.to_json() for r in _rows(app).items] == [r.to_json() for r in transcript]
                assert transcript and escape_inline(transcript[0].content[:40]) in screen_text(app)
                await pilot.press("t")
                await settle(pilot)
                assert [r.to_json(True) for r in _rows(app).items] == [r.to_json(True) for r in with_tools]
                await pilot.press("s")
                await settle(pilot)
                assert isinstance(app.screen, StateScreen)
                state = store.thread_state(key)
                assert state.checkpoint_id in screen_text(app) and state.status in screen_text(app)
                await pilot.press("h")
                await settle(pilot)
                assert isinstance(app.screen, HistoryScreen)
                assert [e.checkpoint_id for e in _rows(app).items] == [e.checkpoint_id for e in history]
                await pilot.press("d")
                await settle(pilot)
                assert isinstance(app.screen, DiffScreen)
                diff = store.diff(key, history[0].parent_checkpoint_id, history[0].checkpoint_id).to_json()
                added = [m["content"] for m in diff["messages"]["added"] if isinstance(m.get("content"), str)]
                for content in added:
                    assert escape_inline(content.splitlines()[0][:40]) in screen_text(app)
                await pilot.press("escape", "escape", "escape", "escape")
                assert isinstance(app.screen, ThreadsScreen)
            # / finds message content in the delta threads, as Store.search does.
            hits = store.search("ECHO")
            assert any(h.key.startswith("delta:") for h in hits)
            await pilot.press("slash", *"ECHO", "enter")
            await settle(pilot)
            assert [h.to_json() for h in _rows(app).items] == [h.to_json() for h in hits]
            await pilot.press("q")
            await pilot.pause()


def test_without_the_key_an_encrypted_transcript_is_one_line(sqlite_kind_store):
    asyncio.run(_without_key(sqlite_kind_store))


@pytest.fixture
def sqlite_kind_store(request):
    from tests.conftest import backend_for

    return _store(backend_for("sqlite", request), encrypted=True)


async def _without_key(url: str) -> None:
    with mock.patch.dict(os.environ, {}):
        os.environ.pop(KEY_ENV, None)
        with symfonic_cli.open_store(url) as store:
            app = browser(store, now=newest_plus(store), store_arg=url)
            async with app.run_test(size=(80, 24)) as pilot:
                await settle(pilot)
                keys = [r.key for r in _rows(app).items]
                assert set(DELTA_KEYS) <= set(keys)  # the listing needs no decrypted bytes
                _rows(app).set_cursor(keys.index("delta:_:plain"))
                await pilot.press("enter")
                await settle(pilot)
                text = screen_text(app)
                assert isinstance(app.screen, TranscriptScreen) and "error: " in text
                assert "question 0" not in text and "Traceback" not in text
                assert KEY not in text
