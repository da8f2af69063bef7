"""What the browser reads, through the Python API's read-only ``Store`` (``symfonic_cli.api.store``).

Every call runs in a worker thread (the screens' ``@work(thread=True)``); one lock keeps them to one
at a time on the store's connection, so SQLite, psycopg and pymongo each see a single caller.
Nothing here escapes: the screens escape what they show (``browse/text.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from symfonic_cli.api.store import Record, Store
from symfonic_cli.errors import StoreError, SymfonicError

# The listing's orders: by last activity (newest first, as threads list), by size, by key.
BROWSE_SORTS = ("activity", "size", "key")
FIRST_PAGE = 200  # rows read first: more than a tall terminal shows
# Then the listing a page at a time, each four times the last, up to the rows the cursor nears:
# memory follows what was scrolled to, never the store (a million threads).
NEXT_PAGE = 5_000


@dataclass(frozen=True)
class Filters:
    """The listing's filters: what ``threads list`` takes (the CLI command of ``x`` says the same)."""

    tenant: str | None = None
    sub_tenant: str | None = None
    status: tuple[str, ...] = ()
    active_within: str | None = None
    inactive_for: str | None = None
    sort: str = BROWSE_SORTS[0]

    def api_options(self) -> dict[str, Any]:
        return {"tenant": self.tenant, "sub_tenant": self.sub_tenant, "active_within": self.active_within,
                "inactive_for": self.inactive_for}

    def with_(self, **changes: Any) -> Filters:
        return replace(self, **changes)


@dataclass
class ThreadRow:
    """One listed thread; ``status``, ``size`` and ``first`` arrive later (their own reads)."""

    key: str
    checkpoints: int
    last_activity: datetime | None
    status: str | None = None
    size: int | None = None
    first: str | None = None


@dataclass
class Listing:
    rows: list[ThreadRow]
    filters: Filters
    statuses_known: bool = False
    complete: bool = True  # False: the first rows only, the rest being read


class Source:
    """The open store, the clock ages are measured from, and the location shown."""

    def __init__(self, store: Store, *, store_arg: str | None = None, now: Callable[[], datetime] | None = None,
                 reopen: Callable[[], Store] | None = None) -> None:
        self.store = store
        # The listing's later pages are read on a second connection (``reopen``, opened when first
        # needed): at a million threads such a read takes as long as the page query (tens of
        # seconds), and the screen's run state, a thread opened meanwhile, would wait behind it.
        self._reopen = reopen
        self._background: Store | None = None
        self._background_lock = threading.Lock()
        self.location: str = store.location  # passwords masked
        self.kind: str = store.kind
        self.store_arg = store_arg  # what the person typed (--store), for the commands ``x`` shows
        self._now = now or (lambda: datetime.now(timezone.utc))
        self._lock = threading.Lock()
        self._first: dict[str, str | None] = {}
        self._status: dict[str, str | None] = {}
        self._early: tuple[Filters, threading.Thread, list[Any]] | None = None

    def now(self) -> datetime:
        return self._now()

    def close(self) -> None:
        with self._lock:
            self.store.close()
        with self._background_lock:
            if self._background is not None:
                self._background.close()
            self._reopen = None

    # -- the listing

    def threads(self, filters: Filters, *, limit: int | None = None, background: bool = False) -> Listing:
        """The listing for ``filters``, sorted; statuses included when the filter asks for them.
        ``limit``: its first rows only (the first screen, while the whole listing is read).
        ``background``: on the second connection when there is one (a later page)."""
        options: dict[str, Any] = {**filters.api_options(), "limit": limit}
        store, lock = self._background_store() if background else (self.store, self._lock)
        with lock:
            by_size = filters.sort == "size"  # threads list --sort size (largest first)
            records = store.threads(status=list(filters.status) or None, with_size=by_size,
                                    sort="size" if by_size else None, **options)
        rows = [_row(r) for r in records]
        if filters.sort == "key":
            rows.sort(key=lambda r: r.key)  # the exact string, code point by code point
        return Listing(rows, filters, statuses_known=bool(filters.status), complete=limit is None or len(rows) < limit)

    def _background_store(self) -> tuple[Store, threading.Lock]:
        """The second connection and its lock; the first connection's when it cannot be opened."""
        with self._background_lock:
            if self._background is None and self._reopen is not None:
                reopen, self._reopen = self._reopen, None  # tried once
                try:
                    self._background = reopen()
                except SymfonicError:
                    pass  # e.g. a server at its connection limit: the one connection serves
        if self._background is None:
            return self.store, self._lock
        return self._background, self._background_lock

    def read_early(self, filters: Filters, limit: int) -> None:
        """Start reading the first screen now, in a thread, before Textual is even imported: the
        listing's rows are mostly Python work that would compete with the app's start for the GIL."""
        box: list[Any] = []

        def run() -> None:
            try:
                box.append(self.threads(filters, limit=limit))
            except Exception as exc:  # handed to the screen, which says it as every read error
                box.append(exc)

        thread = threading.Thread(target=run, name="browse-first-screen", daemon=True)
        self._early = (filters, thread, box)
        thread.start()

    def early(self, filters: Filters) -> Listing | None:
        """The listing ``read_early`` read for ``filters`` (waiting for it), once; None when none."""
        if self._early is None or self._early[0] != filters:
            return None
        _filters, thread, box = self._early
        self._early = None
        thread.join()
        if isinstance(box[0], Exception):
            raise box[0]
        return box[0]

    def statuses(self, keys: list[str]) -> dict[str, str | None]:
        """The run state of each thread (``thread show``'s, as ``threads list --status`` tells it),
        cached: read for the rows on the screen only."""
        out: dict[str, str | None] = {}
        for key in keys:
            if key not in self._status:
                with self._lock:
                    try:
                        self._status[key] = str(self.store.thread_state(key).status)
                    except StoreError:
                        self._status[key] = None  # erased meanwhile, or unreadable: shown without one
            out[key] = self._status[key]
        return out

    def known_status(self, key: str) -> str | None:
        return self._status.get(key)

    def first_messages(self, keys: list[str]) -> dict[str, str | None]:
        """The first user message of each thread (``threads list --columns first``), cached."""
        out: dict[str, str | None] = {}
        for key in keys:
            if key not in self._first:
                with self._lock:
                    try:
                        rows = self.store.transcript(key, speaker="user", index=0)
                        self._first[key] = rows[0].content if rows else None
                    except StoreError:
                        self._first[key] = None  # a thread the transcript cannot read shows none here
            out[key] = self._first[key]
        return out

    def known_first(self, key: str) -> str | None:
        """The first message already read for ``key`` (None when not yet)."""
        return self._first.get(key)

    def search(self, text: str, filters: Filters) -> list[Record]:
        with self._lock:
            return self.store.search(text, tenant=filters.tenant, sub_tenant=filters.sub_tenant,
                                     active_within=filters.active_within, inactive_for=filters.inactive_for)

    # -- one thread

    def transcript(self, key: str, *, tools: bool) -> list[Any]:
        with self._lock:
            return self.store.transcript(key, tools=tools)

    def state(self, key: str) -> Record:
        with self._lock:
            return self.store.thread_state(key)

    def history(self, key: str) -> list[Any]:
        with self._lock:
            return self.store.history(key)

    def diff(self, key: str, a: str, b: str) -> Any:
        with self._lock:
            return self.store.diff(key, a, b)

    def resume_window(self, key: str) -> list[Any]:
        """What symfonic-core's restart-resume recalls (``transcript show --resume-window``)."""
        with self._lock:
            return self.store.resume_window(key)

    # -- the store

    def compat(self) -> Any:
        with self._lock:
            return self.store.compat_report(now=self.now())

    def usage(self) -> Record:
        with self._lock:
            return self.store.usage()


def _row(r: Record) -> ThreadRow:
    fields = r.keys()
    return ThreadRow(key=r.key, checkpoints=r.checkpoints, last_activity=r.last_activity,
                     status=r["status"] if "status" in fields else None,
                     size=r["size_bytes"] if "size_bytes" in fields else None)
