"""``threads search``: the messages holding a text, in the threads a listing would give.

Each thread's transcript is read by the transcript's own code (transcript/read.py), so a hit's
index, role and timestamp are the row ``transcript show`` prints. The store narrows first
(``search_candidates``: a byte test on each thread's latest root checkpoint, search/prefilter.py);
only its candidates are decoded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime

from symfonic_cli.errors import StoreError, UsageError
from symfonic_cli.clock import NEVER, iso_utc
from symfonic_cli.threadkey import parse_key

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.stores.protocol import Store


class Needle:
    """The text looked for, both sides in Unicode NFC, and without ``case_sensitive`` case-folded
    (search/fold.py)."""

    def __init__(self, text: str, *, case_sensitive: bool = False) -> None:
        from symfonic_cli.search.fold import fold

        if not text:
            raise UsageError("the text to search for is empty")
        self.text = text
        self.case_sensitive = case_sensitive
        self.folded = fold(text, case_sensitive=case_sensitive)

    def find(self, text: str) -> tuple[int, int] | None:
        """The first match's span in ``text`` (characters of ``text``), None without one."""
        from symfonic_cli.search.fold import span

        return span(text, self.folded, case_sensitive=self.case_sensitive)


@dataclass(frozen=True)
class Hit:
    key: str
    index: int
    role: str
    timestamp: datetime | None
    message_id: str | None
    field: str  # "content", or with --tools "tool_call.args", "tool_call.name", ...
    text: str  # the field's text
    start: int  # the match, characters of ``text``
    end: int
    checkpoint_id: str | None

    def snippet(self, width: int = 100, *, escaped: bool = True) -> str:
        """Up to about ``width`` cells around the match, cut with "…"; escaped (escape_inline) for
        a table, as stored for JSON and text (their writers escape once: a newline is ``\\n`` in
        JSON, not ``\\\\n``)."""
        return snippet(self.text, self.start, self.end, width, escaped=escaped)

    def to_json(self, width: int = 100) -> dict:
        return {
            "key": self.key,
            "index": self.index,
            "role": self.role,
            "timestamp": iso_utc(self.timestamp),
            "message_id": self.message_id,
            "field": self.field,
            "snippet": self.snippet(width, escaped=False),
            "checkpoint_id": self.checkpoint_id,
        }


def snippet(text: str, start: int, end: int, width: int, *, escaped: bool = True) -> str:
    from symfonic_cli.render import escape_inline

    esc = escape_inline if escaped else _as_is
    # A table's snippet is measured in cells; JSON's and text's in characters (controls are
    # zero cells but one character, and their escaped form is what a reader counts).
    size: Callable[[str], int] = len
    if escaped:
        from rich.cells import cell_len

        size = cell_len
    width = max(width, 8)
    match = esc(text[start:end])
    if size(match) >= width:
        return _fit(match, width - 1, size) + "…"
    room = width - size(match)
    before_room = room // 3
    before, cut_before = _tail(text[max(0, start - width):start], before_room, start > width, esc, size)
    after_room = room - size(before) - (1 if cut_before else 0)
    after, cut_after = _head(text[end:end + width], after_room, len(text) - end > width, esc, size)
    return ("…" if cut_before else "") + before + match + after + ("…" if cut_after else "")


def _fit(escaped: str, width: int, size: Callable[[str], int]) -> str:
    out = ""
    for ch in escaped:
        if size(out + ch) > width:
            break
        out += ch
    return out


def _as_is(text: str) -> str:
    return text


def _head(raw: str, room: int, more: bool, esc: Callable[[str], str], size: Callable[[str], int]) -> tuple[str, bool]:
    out = ""
    for ch in raw:
        piece = esc(ch)
        if size(out) + size(piece) > room - 1:  # keep a cell for the "…"
            return out, True
        out += piece
    return out, more


def _tail(raw: str, room: int, more: bool, esc: Callable[[str], str], size: Callable[[str], int]) -> tuple[str, bool]:
    out = ""
    for ch in reversed(raw):
        piece = esc(ch)
        if size(out) + size(piece) > room - 1:
            return out, True
        out = piece + out
    return out, more


def _fields(row, tools: bool) -> Iterator[tuple[str, str]]:
    """The texts of a transcript row a search looks in: what ``transcript show`` prints of it."""
    yield "content", row.content
    if not tools:
        return
    from symfonic_cli.render import json_dumps

    for call in row.tool_calls or ():
        for name in ("name", "id"):
            if isinstance(call.get(name), str):
                yield f"tool_call.{name}", call[name]
        yield "tool_call.args", json_dumps(call.get("args"))
    if row.role == "tool":
        if row.name is not None:
            yield "name", row.name
        if row.tool_call_id is not None:
            yield "tool_call_id", row.tool_call_id


def first_match(row, needle: Needle, tools: bool) -> tuple[str, str, int, int] | None:
    for name, text in _fields(row, tools):
        span = needle.find(text)
        if span is not None:
            return name, text, span[0], span[1]
    return None


def search(
    store: Store,
    text: str,
    *,
    case_sensitive: bool = False,
    tools: bool = False,
    tenant: str | None = None,
    sub_tenant: str | None = None,
    session: str | None = None,
    window=None,
    limit: int | None = None,
    skipped: list[str] | None = None,
) -> Iterator[Hit]:
    """Every message holding ``text``, thread by thread in the listing's order (newest activity
    first), message order within a thread; at most ``limit`` threads. ``window``: an
    ActivityWindow (retention/window.py). A thread that cannot be read is left out and named in
    ``skipped`` (with why)."""
    from symfonic_cli.search.prefilter import Prefilter

    needle = Needle(text, case_sensitive=case_sensitive)
    if sub_tenant is not None and tenant is None:
        raise UsageError("--sub-tenant needs --tenant")
    pre = Prefilter(text, case_sensitive=case_sensitive, tools=tools)
    if limit == 0:
        return
    found = [0]  # threads with a hit so far
    walked: set[str] = set()
    # Lazy: nothing is read until it is iterated. None: the store cannot narrow (MongoDB).
    narrowed = store.search_candidates(pre, tenant=tenant, sub_tenant=sub_tenant)
    if limit is not None and window is None:
        # A page: the newest threads first, each tested as the listing gives it, so a page of
        # hits among recent threads comes without reading the whole store. A store that narrows
        # does so once the walk has cost half the listing's wait for its first row (one pass
        # over the store, a fraction of the narrowing's): a rare text's page then costs about
        # the whole search, not the whole search after thousands of threads read one by one.
        import time

        listing = store.list_threads(tenant=tenant, sub_tenant=sub_tenant)
        started = time.monotonic()
        budget = None
        try:
            for summary in listing:
                if narrowed is not None:
                    spent = time.monotonic() - started
                    if budget is None:
                        budget = 1.5 * max(spent, WALK_FLOOR)  # the first row's wait, then half as long
                    elif spent >= budget or len(walked) >= PAGE_WALK:
                        break
                walked.add(summary.key)
                for hit in _hits(store, summary.key, None, pre, needle, tools, session, skipped, found):
                    paused = time.monotonic()
                    yield hit
                    started += time.monotonic() - paused  # the caller's time is not the walk's
                if found[0] >= limit:
                    return
            else:
                return  # every thread walked
        finally:
            getattr(listing, "close", lambda: None)()
    candidates = set(narrowed) - walked if narrowed is not None else None
    for key in _threads(store, candidates, tenant=tenant, sub_tenant=sub_tenant, window=window):
        if key in walked:
            continue
        yield from _hits(store, key, candidates, pre, needle, tools, session, skipped, found)
        if limit is not None and found[0] >= limit:
            return


# The most threads a page walks in the listing's order before the store narrows, and the least
# time it may spend on them (seconds; a small store's first row comes at once).
PAGE_WALK = 10_000
WALK_FLOOR = 0.05


def _hits(store: Store, key: str, candidates, pre, needle: Needle, tools: bool, session: str | None,
          skipped: list[str] | None, found: list[int]) -> Iterator[Hit]:
    """The hits of one thread (none when its session is not ``session``, or when its latest root
    checkpoint cannot hold the text); ``found`` counts the threads with hits."""
    from symfonic_cli.transcript.read import read_transcript

    if session is not None:
        parts = parse_key(key)
        if parts is None or parts.session != session:
            return
    if candidates is None and not _may_match(store, key, pre):
        return
    try:
        result = read_transcript(store, key, tools=tools, keep=lambda row: first_match(row, needle, tools) is not None)
    except StoreError as exc:
        if skipped is not None:
            skipped.append(f"{key}: {exc}")
        return
    if not result.rows:
        return
    found[0] += 1
    for row in result.rows:
        field, text, start, end = first_match(row, needle, tools)  # type: ignore[misc]
        yield Hit(key, row.index, row.role, row.timestamp, row.message_id, field, text, start, end, result.checkpoint_id)


def _threads(store: Store, candidates, *, tenant: str | None, sub_tenant: str | None, window) -> Iterator[str]:
    """Keys in the listing's order (newest activity first, then key): the candidates' own
    summaries when the store narrowed (one indexed read each), else the listing itself."""
    if candidates is None:
        bounds = {"last_before": window.last_before, "last_from": window.last_from} if window is not None else {}
        for summary in store.list_threads(tenant=tenant, sub_tenant=sub_tenant, **bounds):
            yield summary.key
        return
    summaries = [s for s in map(store.thread_summary, candidates) if s is not None]
    if window is not None:
        summaries = [s for s in summaries if window.keeps(s.last_at)]  # by instant (stores/activity.py)
    summaries.sort(key=lambda s: s.key)
    summaries.sort(key=lambda s: s.last_at or NEVER, reverse=True)  # by instant, as the listing
    for summary in summaries:
        yield summary.key


def _may_match(store: Store, key: str, pre) -> bool:
    """A store without ``search_candidates`` (MongoDB): its latest root checkpoint, streamed one
    thread at a time, tested in Python."""
    state = store.read_message_state(key)
    if state is None:
        return True
    return pre.may_match(state.payload_type, state.payload, whole_checkpoint=state.encoding == "checkpoint")
