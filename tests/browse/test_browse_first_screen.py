"""The browser's first screen at scale (issue 45 item 3): the first page first, its columns (run
state, first message) next, and only then the rest of the listing, which at a million threads takes
the store's turn for as long as the page query itself; what is not read yet is said so."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import symfonic_cli
from symfonic_cli.browse import threads as screen_module
from symfonic_cli.browse.source import Filters, Source
from symfonic_cli.vocabulary import STATUSES
from tests.support.browser import browser, newest_plus, settle


def test_the_screens_columns_are_read_before_the_next_page(sqlite_store, monkeypatch):
    monkeypatch.setattr(screen_module, "FIRST_PAGE", 3)
    asyncio.run(_order(str(sqlite_store)))


async def _order(url: str) -> None:
    with symfonic_cli.open_store(url) as store:
        every = [t.key for t in store.threads()]
        status = {t.key: t.status for t in store.threads(status=list(STATUSES))}
        assert len(every) > 3
        app = browser(store, now=newest_plus(store), store_arg=url)
        source = app.source
        events: list[tuple[str, Any]] = []
        notes: list[str] = []

        def recorded(name: str, real: Any) -> Any:
            def call(*args: Any, **kwargs: Any) -> Any:
                if name == "threads":  # the listing's reads: when each was asked for
                    events.append((name, kwargs.get("limit")))
                    if kwargs.get("limit") != 3:
                        notes.append(str(app.screen.query_one("#note").content))
                    return real(*args, **kwargs)
                result = real(*args, **kwargs)
                events.append((name, tuple(args[0])))  # the screen's reads: when each was back
                return result
            return call

        for name in ("threads", "statuses", "first_messages"):
            setattr(source, name, recorded(name, getattr(source, name)))
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert [r.key for r in app.screen.query_one("#rows").items] == every and app.screen.listing.complete
            shown = {r.key: r.status for r in app.screen.listing.rows[:3]}
        names = [name for name, _ in events]
        assert events[0] == ("threads", 3), events
        rest = names.index("threads", 1)
        assert events[rest][1] == screen_module.NEXT_PAGE, events
        # Both columns of the three rows on the screen were back before the next page was asked for.
        assert ("statuses", tuple(every[:3])) in events[:rest], events
        assert ("first_messages", tuple(every[:3])) in events[:rest], events
        assert shown == {k: status[k] for k in every[:3]}
        # Meanwhile the note said the screen holds the first rows only, the others being read.
        assert notes and notes[0] == "the first 3 threads; reading the others ...", notes


def test_the_later_pages_are_read_on_a_second_connection(any_kind):
    """A later page of the listing (at a million threads as long as the page query) does not wait
    for the first connection, nor holds it: the screen's run state, a thread opened, go on."""
    url = any_kind.new_store()
    with symfonic_cli.open_store(url) as store:
        every = [t.key for t in store.threads()]
        source = Source(store, reopen=lambda: symfonic_cli.open_store(url))
        pages: list[Any] = []
        with source._lock:  # the first connection busy (a status read, a transcript)
            reader = threading.Thread(target=lambda: pages.append(source.threads(Filters(), limit=3, background=True)))
            reader.start()
            reader.join(timeout=60)
            assert pages, "the later page waited for the first connection"
        assert [r.key for r in pages[0].rows] == every[:3] and not pages[0].complete
        assert source._background is not None and source._background is not store
        source.close()
