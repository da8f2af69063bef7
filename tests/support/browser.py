"""Driving ``symfonic browse``'s app headless (Textual's Pilot) and reading its screen as text."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from symfonic_cli.browse.app import BrowseApp
from symfonic_cli.browse.source import Source


def screen_text(app: BrowseApp) -> str:
    """The characters on the screen now (the top screen with what shows under a modal), one line per row."""
    update = app.screen._compositor.render_full_update()
    return "\n".join("".join(segment.text for segment in strip).rstrip() for strip in update.strips)


async def settle(pilot: Any) -> None:
    """Until every store read has come back and been drawn."""
    for _ in range(3):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def browser(store: Any, *, now: datetime | None = None, store_arg: str | None = None, keymap: dict[str, str] | None = None) -> BrowseApp:
    """The app on an open API Store; ``now``: the clock the ages are measured from (fixed in tests)."""
    clock = (lambda: now) if now is not None else None
    return BrowseApp(Source(store, store_arg=store_arg, now=clock), keymap=keymap)


def newest_plus(store: Any, hours: int = 2) -> datetime:
    """A fixed clock: ``hours`` after the store's newest activity (ages then do not depend on when the test runs)."""
    return max(t.last_activity for t in store.threads()) + timedelta(hours=hours)
