"""``symfonic browse`` driven headless (Textual's Pilot) on stores written by real graphs, on every
store kind: every screen and every transition, each checked against what the Python API (and so
the CLI's JSON) answers for the same store."""

from __future__ import annotations

import asyncio

import pytest

import symfonic_cli
from symfonic_cli.browse.text import command_line
from symfonic_cli.browse.thread import DiffScreen, HistoryScreen, StateScreen, TranscriptScreen
from symfonic_cli.browse.threads import FilterScreen, ThreadsScreen
from symfonic_cli.render import escape_inline
from symfonic_cli.vocabulary import STATUSES
from tests.support.browser import browser, newest_plus, screen_text, settle
from tests.support.hostile_labels import raw_bytes


@pytest.fixture
def store_url(any_kind):
    return any_kind.new_store()


def _rows(app):
    return app.screen.query_one("#rows")


def test_every_screen_and_transition(store_url):
    asyncio.run(_every_screen(store_url))


async def _every_screen(url: str) -> None:
    with symfonic_cli.open_store(url) as store:
        listed = store.threads(status=list(STATUSES))
        key = "acme:_:s-001"
        transcript = store.transcript(key)
        with_tools = store.transcript(key, tools=True)
        history = store.history(key)
        state = store.thread_state(key)
        app = browser(store, now=newest_plus(store), store_arg=url)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            # Threads: the listing's rows in its order, each with its run state.
            assert isinstance(app.screen, ThreadsScreen)
            shown = _rows(app).items
            assert [r.key for r in shown] == [t.key for t in store.threads()]
            assert {r.key: r.status for r in shown} == {t.key: t.status for t in listed}
            text = screen_text(app)
            for t in listed[:30]:
                assert escape_inline(t.key) in text
            # Enter on acme:_:s-001 opens its transcript: the API's rows.
            _rows(app).set_cursor([r.key for r in shown].index(key))
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, TranscriptScreen) and app.screen.key == key
            assert [r.to_json() for r in _rows(app).items] == [r.to_json() for r in transcript]
            assert escape_inline(transcript[0].content.splitlines()[0][:40]) in screen_text(app)
            await pilot.press("t")
            await settle(pilot)
            assert [r.to_json(True) for r in _rows(app).items] == [r.to_json(True) for r in with_tools]
            assert any(r.tool_calls for r in with_tools) and "-> call" in screen_text(app)
            await pilot.press("G")
            assert _rows(app).cursor == len(with_tools) - 1
            await pilot.press("g")
            assert _rows(app).cursor == 0
            # r: what symfonic-core's restart-resume recalls (Store.resume_window).
            await pilot.press("r")
            await settle(pilot)
            assert type(app.screen).__name__ == "ResumeScreen"
            window = store.resume_window(key)
            assert window and [r.to_json() for r in _rows(app).items] == [r.to_json() for r in window]
            assert escape_inline(window[-1].content.splitlines()[0][:40]) in screen_text(app)
            await pilot.press("escape")
            assert isinstance(app.screen, TranscriptScreen)
            # y copies the exact key (OSC 52); x shows the command of this view.
            await pilot.press("y")
            assert app.clipboard == key
            await pilot.press("x")
            await settle(pilot)
            from symfonic_cli.location import mask_url

            assert app.screen.line == command_line(["transcript", "show", "--store", mask_url(url), "--thread", key, "--tools"])
            assert "symfonic transcript show --store" in screen_text(app)
            await pilot.press("escape")
            # s: the run state, as thread show.
            await pilot.press("s")
            await settle(pilot)
            assert isinstance(app.screen, StateScreen)
            text = screen_text(app)
            assert state.status in text and state.checkpoint_id in text
            await pilot.press("escape")
            # h: the checkpoints, newest first; d: the diff against the parent.
            await pilot.press("h")
            await settle(pilot)
            assert isinstance(app.screen, HistoryScreen)
            assert [e.checkpoint_id for e in _rows(app).items] == [e.checkpoint_id for e in history]
            assert history[0].checkpoint_id in screen_text(app)
            await pilot.press("d")
            await settle(pilot)
            assert isinstance(app.screen, DiffScreen)
            diff = store.diff(key, history[0].parent_checkpoint_id, history[0].checkpoint_id).to_json()
            assert (app.screen.a, app.screen.b) == (diff["from"]["checkpoint_id"], diff["to"]["checkpoint_id"])
            assert diff["to"]["checkpoint_id"] in screen_text(app)
            await pilot.press("escape")
            # space marks two checkpoints; d diffs them, older first.
            await pilot.press("space", "down", "down", "space", "d")
            await settle(pilot)
            assert isinstance(app.screen, DiffScreen)
            assert (app.screen.a, app.screen.b) == (history[2].checkpoint_id, history[0].checkpoint_id)
            await pilot.press("escape", "escape", "escape")
            assert isinstance(app.screen, ThreadsScreen)
            # c and u: the store's compat report and usage.
            await pilot.press("c")
            await settle(pilot)
            report = store.compat_report().to_json()
            assert f"{report['checkpoints']}" in screen_text(app) and "compat report" in screen_text(app)
            await pilot.press("escape", "u")
            await settle(pilot)
            usage = store.usage().to_json()
            assert escape_inline(usage["largest_threads"][0]["key"]) in screen_text(app)
            await pilot.press("escape", "question_mark")
            await settle(pilot)
            assert "copy" in screen_text(app) and "history" in screen_text(app)
            await pilot.press("escape")
            assert isinstance(app.screen, ThreadsScreen)
            # ":" the palette: a view by name, and a filter by name.
            await pilot.press("colon", *"usage", "enter")
            await settle(pilot)
            assert type(app.screen).__name__ == "UsageScreen"
            await pilot.press("escape", "colon", *"status error", "enter")
            await settle(pilot)
            assert isinstance(app.screen, ThreadsScreen)
            assert [r.key for r in _rows(app).items] == [t.key for t in store.threads(status="error")]
            await pilot.press("q")
            await pilot.pause()
        assert app.return_code in (0, None)


def test_search_filter_and_sort(store_url):
    asyncio.run(_search_filter_sort(store_url))


async def _search_filter_sort(url: str) -> None:
    with symfonic_cli.open_store(url) as store:
        hits = store.search("keep")
        assert hits
        app = browser(store, now=newest_plus(store), store_arg=url)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            # / searches message content: threads search's hits, Enter lands on the hit's message.
            await pilot.press("slash", *"keep", "enter")
            await settle(pilot)
            assert [h.to_json() for h in _rows(app).items] == [h.to_json() for h in hits]
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, TranscriptScreen) and app.screen.key == hits[0].key
            landed = _rows(app).items[_rows(app).cursor]
            assert landed.message_id == hits[0].message_id
            await pilot.press("escape", "escape")
            assert isinstance(app.screen, ThreadsScreen) and app.screen.hits is None
            # f: filter by status (threads list --status done).
            await pilot.press("f")
            await settle(pilot)
            assert isinstance(app.screen, FilterScreen)
            app.screen.query_one("#status").value = "done"
            await pilot.press("enter")
            await settle(pilot)
            done = [t.key for t in store.threads(status="done")]
            assert [r.key for r in _rows(app).items] == done
            # o: by size (threads list --sort size), then by key (the exact strings' order).
            await pilot.press("o")
            await settle(pilot)
            by_size = [t.key for t in store.threads(status="done", with_size=True, sort="size")]
            assert [r.key for r in _rows(app).items] == by_size
            await pilot.press("o")
            await settle(pilot)
            assert [r.key for r in _rows(app).items] == sorted(done)
            # A wrong status word is refused where it was typed, the listing unchanged.
            await pilot.press("f")
            await settle(pilot)
            app.screen.query_one("#status").value = "stuck"
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, FilterScreen)
            await pilot.press("escape")
            assert [r.key for r in _rows(app).items] == sorted(done)


def test_hostile_store_never_reaches_the_terminal_raw(any_kind):
    asyncio.run(_hostile(any_kind))


async def _hostile(backend) -> None:
    from tests.support import hostile_labels as hl

    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        hl.write(saver)
    with symfonic_cli.open_store(url) as store:
        app = browser(store, now=newest_plus(store), store_arg=url)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            seen = [screen_text(app)]
            assert escape_inline(hl.KEY) in seen[0]
            for keys in (["enter"], ["t"], ["s"], ["escape", "h"], ["d"], ["escape", "escape", "escape", "c"], ["escape", "u"]):
                await pilot.press(*keys)
                await settle(pilot)
                seen.append(screen_text(app))
            for text in seen:
                assert raw_bytes(text, terminal=False) == [], text
            assert any(escape_inline(hl.NODE) in text for text in seen)


def test_first_screen_then_the_whole_listing(sqlite_store, monkeypatch):
    """A screenful first (read before the app starts, as cli/browse.py does), then every thread:
    the same rows the listing gives."""
    from symfonic_cli.browse import threads as screen_module

    monkeypatch.setattr(screen_module, "FIRST_PAGE", 3)
    asyncio.run(_paged(str(sqlite_store)))


async def _paged(url: str) -> None:
    from symfonic_cli.browse.source import Filters

    with symfonic_cli.open_store(url) as store:
        every = [t.key for t in store.threads()]
        assert len(every) > 3
        app = browser(store, now=newest_plus(store), store_arg=url)
        app.source.read_early(Filters(), 3)
        first = app.source._early
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert first is not None and len(first[2][0].rows) == 3 and not first[2][0].complete
            assert app.source._early is None  # taken by the first screen, not read again
            assert [r.key for r in _rows(app).items] == every and app.screen.listing.complete
            # Each later read (here three sorts, back to activity) pages the same way: 3 rows, then all.
            await pilot.press("down", "down")
            await pilot.press("o", "o", "o")
            await settle(pilot)
            assert [r.key for r in _rows(app).items] == every


@pytest.mark.parametrize("cols,rows", [(80, 24), (120, 40)])
def test_the_note_and_the_keys_fit_on_every_screen(sqlite_store, cols, rows):
    """The note line is shown whole and the key line ends with ``? help`` (it lists every key)
    within the width, on every screen: the search hits and store usage included (issue 39: both
    were cut at 80 columns)."""
    asyncio.run(_fits(str(sqlite_store), cols, rows))


async def _fits(url: str, cols: int, rows: int) -> None:
    from rich.text import Text

    with symfonic_cli.open_store(url) as store:
        app = browser(store, now=newest_plus(store), store_arg=url)
        async with app.run_test(size=(cols, rows)) as pilot:
            await settle(pilot)
            seen = []
            for keys in ((), ("slash", *"keep", "enter"), ("enter",), ("s",), ("escape", "h"), ("d",),
                         ("escape", "escape", "escape", "escape", "c"), ("escape", "u"), ("escape", "question_mark")):
                await pilot.press(*keys)
                await settle(pilot)
                name = type(app.screen).__name__
                seen.append(name)
                lines = screen_text(app).splitlines()
                note = app.screen.query_one("#note").content
                note = note.plain if isinstance(note, Text) else str(note)
                assert len(lines) == rows and len(lines[-1]) <= cols, (name, lines[-1])
                assert lines[-1].endswith("? help") and "q quit" in lines[-1] and "esc back" in lines[-1], (name, lines[-1])
                assert (note.strip() or name == "HelpScreen") and lines[-2].strip() == note.strip(), (name, note, lines[-2])
                if cols >= 120:  # room for every key of the screen
                    assert lines[-1].split() == " ".join(f"{k} {d}" for _i, k, d in app.screen.query_one("#keys").keys()).split()
            assert seen == ["ThreadsScreen", "ThreadsScreen", "TranscriptScreen", "StateScreen", "HistoryScreen",
                            "DiffScreen", "CompatScreen", "UsageScreen", "HelpScreen"]


def test_the_collector_settings_are_given_back(sqlite_store):
    """While browsing, the whole listing is frozen out of the garbage collector's full passes and
    those run less often (a pass over 20,000 threads' rows cost up to 0.4 s in a key); the
    process's settings are as before once the app ends (the browser may run inside a program)."""
    import gc

    before = gc.get_threshold()
    asyncio.run(_collector(str(sqlite_store), before))
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


async def _collector(url: str, before: tuple[int, int, int]) -> None:
    import gc

    with symfonic_cli.open_store(url) as store:
        app = browser(store, now=newest_plus(store), store_arg=url)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert app.screen.listing.complete
            assert gc.get_threshold()[2] >= 100 and gc.get_freeze_count() > 0
            await pilot.press("q")
            await pilot.pause()


def test_the_listing_grows_as_the_cursor_nears_its_end(sqlite_store, monkeypatch):
    """After the first screen the listing is read a page at a time as the cursor nears the last
    row read (memory follows what was scrolled to, not the store), and the run state is read for
    the rows on the screen only."""
    from symfonic_cli.browse import threads as screen_module

    monkeypatch.setattr(screen_module, "FIRST_PAGE", 1)
    monkeypatch.setattr(screen_module, "NEXT_PAGE", 1)  # then 4, 16, ...
    asyncio.run(_grows(str(sqlite_store)))


async def _grows(url: str) -> None:
    with symfonic_cli.open_store(url) as store:
        every = [t.key for t in store.threads()]
        status = {t.key: t.status for t in store.threads(status=list(STATUSES))}
        app = browser(store, now=newest_plus(store), store_arg=url)
        async with app.run_test(size=(80, 7)) as pilot:
            await settle(pilot)
            listing = app.screen.listing
            shown = set(_rows(app).on_screen())
            assert 1 < len(listing.rows) < len(every), (len(listing.rows), len(every), shown)
            assert [r.key for r in listing.rows] == every[: len(listing.rows)] and not listing.complete
            assert len(shown) < len(listing.rows)
            for i, row in enumerate(listing.rows):  # the screen's rows have their run state, the others none yet
                assert row.status == (status[row.key] if i in shown else None), (i, row.key)
            for _ in range(len(every)):
                if app.screen.listing.complete:
                    break
                await pilot.press("end")
                await settle(pilot)
            assert [r.key for r in _rows(app).items] == every and app.screen.listing.complete
            await pilot.press("end")  # the last rows on the screen: their run state read then
            await settle(pilot)
            last = len(every) - 1
            assert app.screen.listing.rows[last].status == status[every[last]]
