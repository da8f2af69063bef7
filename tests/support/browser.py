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
    """Until every store read has come back and been drawn (a read's result may start the next:
    statuses and first messages follow the listing)."""
    for _ in range(50):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        if not any(worker.is_running for worker in pilot.app.workers):
            break
    _steady_cursors(pilot.app)
    await pilot.pause()


def _steady_cursors(app: Any) -> None:
    """A text field's cursor shown steadily: it blinks every 0.5 s, so on a slow run a snapshot
    could catch it hidden; what is on the screen must not depend on when it is read."""
    from textual.widgets import Input

    for screen in app.screen_stack:
        for field in screen.query(Input):
            field.cursor_blink = False


def browser(store: Any, *, now: datetime | None = None, store_arg: str | None = None, keymap: dict[str, str] | None = None) -> BrowseApp:
    """The app on an open API Store; ``now``: the clock the ages are measured from (fixed in tests)."""
    clock = (lambda: now) if now is not None else None
    return BrowseApp(Source(store, store_arg=store_arg, now=clock), keymap=keymap)


def newest_plus(store: Any, hours: int = 2) -> datetime:
    """A fixed clock: ``hours`` after the store's newest activity (ages then do not depend on when the test runs)."""
    return max(t.last_activity for t in store.threads()) + timedelta(hours=hours)


class _Clock:
    """The time LangGraph stamps checkpoints with while a snapshot store is written: a fixed start,
    one millisecond further at each reading (ids and ``ts`` the same in every run)."""

    def __init__(self, start: datetime) -> None:
        self.at = start

    def tick(self) -> datetime:
        self.at += timedelta(milliseconds=1)
        return self.at


def fixed_time_store(write: Any, *args: Any) -> Any:
    """``write(*args)`` (a function writing a store through real graphs) with LangGraph's checkpoint
    clock fixed: every checkpoint id and ``ts`` is the same in every run, so a screen showing them
    can be compared with a snapshot taken on another day."""
    from datetime import timezone
    from unittest import mock
    from uuid import UUID

    from langgraph.pregel import _checkpoint

    clock = _Clock(datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc))

    class FixedDatetime(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> FixedDatetime:  # type: ignore[override]
            at = clock.tick()
            return cls.fromtimestamp(at.timestamp(), tz or timezone.utc)

    def uuid6(node: int | None = None, clock_seq: int | None = None) -> UUID:
        ticks = int(clock.tick().timestamp() * 10_000_000) + 0x01B21DD213814000
        n = ((ticks >> 12) & 0xFFFFFFFFFFFF) << 80 | 0x6 << 76 | (ticks & 0x0FFF) << 64
        return UUID(int=n | (0x8000 | ((clock_seq or 0) & 0x3FFF)) << 48)  # version 6, RFC 4122 variant

    import random
    import uuid

    ids = random.Random(20261130)

    def uuid4() -> UUID:  # the message ids add_messages gives, from a fixed seed
        return UUID(int=ids.getrandbits(128), version=4)

    with mock.patch.object(_checkpoint, "datetime", FixedDatetime), mock.patch.object(_checkpoint, "uuid6", uuid6), \
            mock.patch.object(uuid, "uuid4", uuid4):
        return write(*args)
