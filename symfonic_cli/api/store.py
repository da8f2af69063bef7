"""``Store``: a store opened read-only (``symfonic_cli.open_store``, api/opening.py), answering what
the reading commands answer; the commands, the browser and the MCP server render what it returns.

Each method runs the library function its command runs and returns objects whose ``to_json()`` is
that command's ``-f json`` record (README "Python API"); errors are ``SymfonicError`` subclasses
carrying the command's exit code (an unknown thread: ``NotFoundError``, 3).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from symfonic_cli.api.checks import checked
from symfonic_cli.api.records import InfoRecord, Noted, Recalled, Record, Rows, Stream, ThreadRow, TranscriptRows, _instant
from symfonic_cli.errors import UsageError
from symfonic_cli.vocabulary import SPEAKERS, one_of

# typing.TYPE_CHECKING without importing typing (the quick route loads this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Concatenate, ParamSpec

    from symfonic_cli.api.compat import CompatAnswer

    P = ParamSpec("P")


def parse_speakers(text: str, *, option: str) -> set[str] | None:
    """``speaker`` (``--speaker``): one role, a comma list of roles or ``all`` (None: every row);
    a UsageError naming ``option`` for another word."""
    from symfonic_cli.transcript.rows import parse_speakers as parse

    try:
        return parse(text)
    except ValueError as exc:
        raise UsageError(f"unknown {option} '{exc.args[0]}'", hint=f"use {one_of(SPEAKERS)}, or a comma list") from None


def activity_window(inactive_for: str | None = None, inactive_since: str | None = None, active_within: str | None = None,
                    since: str | datetime | None = None, until: str | datetime | None = None, *, zone=None):
    """The window of last activity the options ask for (retention/window.py; None without any),
    times typed without an offset in ``zone`` (UTC by default). A front end calls it to judge the
    options before it opens a store; the Store's methods read them with it."""
    from symfonic_cli.listing import activity_window as window

    return window(inactive_for, inactive_since, active_within, since, until, tz=zone)


def _bound(name: str, value, *, until: bool) -> datetime | None:
    """``since``/``until``: an aware datetime, or the text ``--since``/``--until`` take (naive means UTC)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise UsageError(f"{name} is a naive datetime", hint="give a timezone-aware datetime (an instant)")
        return value
    if not isinstance(value, str):
        raise UsageError(f"{name} must be a datetime or a string, not {type(value).__name__}")
    from symfonic_cli.clock import parse_time

    try:
        return parse_time(value, until=until)
    except (ValueError, OverflowError):
        raise UsageError(f"{name} '{value}' is not a time", hint="e.g. 2h (ago), 2026-11-30 or 2026-11-30T09:00:00Z") from None


def _duration(name: str, value) -> timedelta:
    if isinstance(value, timedelta):
        return value
    from symfonic_cli.clock import parse_duration

    return parse_duration(value, option=name)


def _as_rows(listing: Callable[Concatenate[Store, P], Stream]) -> Callable[Concatenate[Store, P], list[Record]]:
    """``Store.threads`` made from ``Store.listing``: the same keywords but the stream's own
    (``first_message``, ``status_if_told``), the records as rows."""
    stream_of = getattr(listing, "__wrapped__", listing)  # the unchecked function: threads checks once

    def threads(self: Store, /, *args: P.args, **filters: P.kwargs) -> list[Record]:
        """``threads list``: one row per thread (``.key``, ``.tenant``, ..., ``.first_activity`` and
        ``.last_activity`` as datetimes; ``.status`` always, read for the row when first used unless
        ``status=`` was given; ``.size_bytes`` when asked for). ``since``/``until``:
        last activity inside that window, both ends included (aware datetimes, or the text ``--since``/
        ``--until`` take), decided by instant. The keywords are ``listing``'s but its last two."""
        for name in _STREAM_ONLY:
            if name in filters:
                raise UsageError(f"threads: got an unexpected keyword argument '{name}'")
        return [
            ThreadRow(r, {"first_activity": _instant(r["first_activity"]), "last_activity": _instant(r["last_activity"])},
                      self._status_of)
            for r in stream_of(self, *args, **filters)
        ]

    threads.__wrapped__ = stream_of  # type: ignore[attr-defined]  # inspect.signature, help() and checked read its keywords
    return threads


_STREAM_ONLY = ("first_message", "status_if_told")  # listing's keywords threads does not take


def _as_hit_rows(matches: Callable[Concatenate[Store, P], Stream]) -> Callable[Concatenate[Store, P], list[Record]]:
    """``Store.search`` made from ``Store.matches``: the same arguments, the hits as rows."""
    stream_of = getattr(matches, "__wrapped__", matches)  # the unchecked function: search checks once

    def search(self: Store, /, *args: P.args, **filters: P.kwargs) -> list[Record]:
        """``threads search``: one row per matching message (``.key .index .role .timestamp`` (an
        aware datetime or None) ``.snippet .message_id .field .checkpoint_id``), in the command's order.
        The arguments are ``matches``'s."""
        from symfonic_cli.limits import JSON_SNIPPET

        text = args[0] if args else filters.get("text")
        if not isinstance(text, str) or not text:
            raise UsageError("search needs a text")
        return [Record(h.to_json(JSON_SNIPPET), {"timestamp": h.timestamp}) for h in stream_of(self, *args, **filters)]

    search.__wrapped__ = stream_of  # type: ignore[attr-defined]  # inspect.signature, help() and checked read its arguments
    return search


class Store:
    """A store opened read-only (``open_store``); use it in a ``with`` block, or call ``close()``."""

    def __init__(self, backend, *, zone=None, parsed: bool = False) -> None:
        self._store = backend
        self._parsed = parsed  # a command line's parser checked the arguments (api/checks.py)
        self._zone = zone  # where a time typed without an offset is (None: UTC); a front end's --tz
        self.location = backend.location.display  # passwords masked
        self.kind = backend.location.kind

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._store.close()

    @property
    def open_warnings(self) -> list[str]:
        """What the driver warned about while opening the store (only MongoDB's driver warns), a line each."""
        return list(self._store.open_warnings)

    def connection_lost(self) -> bool:
        """After a StoreError: whether the connection itself was lost (a server restarted, a network
        dropped), so that opening the store again may answer."""
        return bool(self._store.connection_lost())

    def _thread(self, key: str) -> None:
        from symfonic_cli.suggestions import require_thread

        if not isinstance(key, str) or not key:
            raise UsageError("a thread key is a non-empty string")
        require_thread(self._store, key)

    def info(self) -> InfoRecord:
        """``store info``: ``to_json()`` its JSON record, ``pairs()`` what its table shows."""
        from symfonic_cli.listing import info_pairs

        i = self._store.info()
        return InfoRecord(dict(info_pairs(i, json=True)), info_pairs(i, json=False))

    @checked
    def listing(
        self,
        *,
        tenant: str | None = None,
        sub_tenant: str | None = None,
        session: str | None = None,
        status: str | list[str] | None = None,
        sort: str | None = None,
        reverse: bool = False,
        with_size: bool = False,
        limit: int | None = None,
        inactive_for: str | None = None,
        inactive_since: str | None = None,
        active_within: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        first_message: bool = False,
        status_if_told: bool = False,
    ) -> Stream:
        """``threads list``'s records (each the command's ``-f json`` record, a dict), streamed in
        its order: a page costs a page. Its keywords are ``threads``'s too (declared here, once) but
        the last two, the stream's own: ``first_message``: each record also holds the thread's
        first user message (as stored); ``status_if_told``: a store that cannot tell the status (an
        encrypted store without its key) lists without it, the stream's ``.status_unknown`` saying
        why. ``.columns``, ``.undatable``: see ``Stream``."""
        from symfonic_cli.api.listing import listing

        if isinstance(status, str):
            status = [status]
        window = activity_window(inactive_for, inactive_since, active_within, since, until, zone=self._zone)
        return listing(self._store, self.location, tenant=tenant, sub_tenant=sub_tenant, limit=limit, status=status,
                       session=session, sort=sort, reverse=reverse, with_size=with_size, window=window,
                       first_message=first_message, status_if_told=status_if_told)

    # threads list's rows as a list: listing's keywords (declared once, there), its stream's records.
    threads = checked(_as_rows(listing))

    def thread_count(self) -> int:
        """How many threads the store holds (every one the listing lists)."""
        return sum(1 for _ in self._store.list_threads())

    def _status_of(self, key: str) -> str:
        return str(self.thread_state(key).status)

    @checked
    def transcript(
        self,
        key: str,
        *,
        index: int | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        speaker: str = "all",
        limit: int | None = None,
        tools: bool = False,
        checkpoint: str | None = None,
    ) -> TranscriptRows:
        """``transcript show``: rows with ``.index .role .content .message_id .timestamp`` (an aware
        datetime or None) and ``.not_read_by_application``; ``to_json(tools)`` is the command's JSON
        record. The list (``TranscriptRows``) also holds what the command says on stderr:
        ``.warnings`` and ``.not_read_by_application``."""
        from symfonic_cli.memory.latest import with_application_note
        from symfonic_cli.transcript.read import read_transcript

        speakers = parse_speakers(speaker, option="speaker")
        if index is not None and (since is not None or until is not None):
            raise UsageError("index and since/until are mutually exclusive, as in get_transcript")
        lo, hi = _bound("since", since, until=False), _bound("until", until, until=True)
        self._thread(key)
        result = read_transcript(
            self._store, key, checkpoint_id=checkpoint, speaker=speakers, index=index, since=lo, until=hi, limit=limit, tools=tools
        )
        result = with_application_note(self._store, key, result, checkpoint_id=checkpoint)
        unread = result.rows[0].not_read_by_application if result.rows else None
        return TranscriptRows(result.rows, warnings=result.warnings, not_read_by_application=unread)

    @checked
    def resume_window(self, key: str, *, max_entries: int = 10) -> Recalled:
        """``transcript show --resume-window``: the rows symfonic-core's restart-resume replays into a
        fresh working deque of ``max_entries``, oldest first: ``ResumeRow`` with ``.speaker .turn_id
        .content .timestamp``; ``to_json()`` is the command's JSON record. Empty when a restart
        recalls nothing: the list's ``.reason`` says why (None when there are rows); ``.warnings``."""
        from symfonic_cli.memory.resume import read_resume_window

        if not isinstance(max_entries, int) or isinstance(max_entries, bool) or max_entries < 0:
            raise UsageError(f"max_entries must be a whole number >= 0, not {max_entries!r}")
        self._thread(key)
        window = read_resume_window(self._store, key, max_entries=max_entries)
        return Recalled(window.rows, warnings=window.warnings, reason=window.reason)

    @checked
    def retained(self, key: str) -> list:
        """``transcript show --retained``: every message version any checkpoint (or stored write) of
        the thread holds, oldest first: ``RetainedMessage`` with ``.index .role .content .message_id
        .first_seen .current .pending .removed_at .removed_by`` (and the checkpoints); ``to_json()``
        is the command's JSON record."""
        from symfonic_cli.memory.retained import read_retained

        self._thread(key)
        return read_retained(self._store, key)

    @checked
    def thread_state(self, key: str) -> Noted:
        """``thread show``: ``.status``, ``.next``, ``.interrupts``, ``.errors``, ... and ``.namespaces_state``
        (each namespace's run state, the JSON's ``namespaces`` list); ``.warnings``: what the
        command says on stderr (values shown from their raw fields)."""
        from symfonic_cli.threadstate.show import thread_state

        self._thread(key)
        record, namespaces, warnings = thread_state(self._store, key)
        doc = {k: v for k, v in record.items() if k != "created"}
        doc["namespaces"] = namespaces
        return Noted(doc, {"created": record.get("created"), "namespace_count": record["namespaces"]}, warnings=warnings)

    @checked
    def history(self, key: str, *, namespace: str | None = None, limit: int | None = None) -> Rows:
        """``thread history``: every checkpoint, newest first (``HistoryEntry``: ``.checkpoint_id``,
        ``.step``, ``.writes``, ``.marks``, ...; ``to_json()`` is the command's record); the list's
        ``.warnings``: the classes shown from their raw fields, as the command says them."""
        from symfonic_cli.history.history import build_history

        self._thread(key)
        result = build_history(self._store, key, namespace=namespace, limit=limit)
        return Rows(result.entries, warnings=result.warnings)

    @checked
    def diff(self, key: str, a: str | int, b: str | int, *, namespace: str | None = None, lean: bool = False):
        """``thread diff``: what changed from checkpoint ``a`` to ``b`` (ids, or -1 for the latest,
        -2 for the one before, ...); ``to_json()`` is the command's document, ``.warnings`` what it
        says on stderr. ``lean``: messages read from their stored fields (role and content, what
        the command's text and table show), quicker; the JSON document is the one without it."""
        from symfonic_cli.history.diff import diff_checkpoints

        refs = [str(r) for r in (a, b)]
        if any(not r for r in refs):
            raise UsageError("a checkpoint id is empty")
        self._thread(key)
        return diff_checkpoints(self._store, key, refs[0], refs[1], namespace=namespace, lean=lean)

    @checked
    def compat_report(
        self,
        *,
        thread: str | None = None,
        by_thread: bool = False,
        grace: str | timedelta = "15m",
        current_format: int | None = None,
        envelope_key: str | None = None,
        now: datetime | None = None,
    ):
        """``compat report``: the store's report (default), one thread's (``thread=KEY``) or a list of
        every thread's (``by_thread=True``); each has ``.findings()`` and ``to_json()``."""
        answer = self.compat(thread=thread, by_thread=by_thread, grace=grace, current_format=current_format,
                             envelope_key=envelope_key, now=now)
        return list(answer.reports) if answer.mode == "by-thread" else answer.report

    @checked
    def compat(
        self,
        *,
        thread: str | None = None,
        by_thread: bool = False,
        grace: str | timedelta = "15m",
        current_format: int | None = None,
        envelope_key: str | None = None,
        now: datetime | None = None,
    ) -> CompatAnswer:
        """``compat report`` as its command renders it: a ``CompatAnswer`` (api/compat.py) with the
        report (``.report``, or ``.reports`` by thread, streamed), its ``.findings``, the table's
        ``.pairs(environment)`` and ``.failed(fail_on)``."""
        from datetime import timezone

        from symfonic_cli.api.compat import CompatAnswer
        from symfonic_cli.compat import command as cc
        from symfonic_cli.compat.envelope import CURRENT_FORMAT, DEFAULT_ENVELOPE_KEY

        if thread is not None and by_thread:
            raise UsageError("by_thread reports every thread; leave out thread")
        key = DEFAULT_ENVELOPE_KEY if envelope_key is None else envelope_key
        if not key:
            raise UsageError("envelope_key is empty")
        request = cc.CompatRequest(
            envelope_key=key, current_format=CURRENT_FORMAT if current_format is None else current_format,
            grace=_duration("grace", grace), now=now or datetime.now(timezone.utc),
            mode=cc.THREAD if thread is not None else cc.BY_THREAD if by_thread else cc.STORE,
        )
        if thread is not None:
            self._thread(thread)
            request.thread = thread
        return CompatAnswer(cc.run_report(self._store, request))

    @checked
    def compat_checkpoints(self, key: str, *, envelope_key: str | None = None, current_format: int | None = None,
                           checkpoint: str | None = None):
        """``compat show``: every checkpoint of the thread with its envelope verdict, newest first
        (``to_json()``: the command's record), or the one ``checkpoint`` names (``to_json(full=True)``)."""
        from symfonic_cli.compat import command as cc
        from symfonic_cli.compat.envelope import CURRENT_FORMAT, DEFAULT_ENVELOPE_KEY

        found = DEFAULT_ENVELOPE_KEY if envelope_key is None else envelope_key
        if not found:
            raise UsageError(f"{self._option('envelope_key')} is empty")
        self._thread(key)
        return cc.checkpoint_verdicts(self._store, key, envelope_key=found,
                                      current_format=CURRENT_FORMAT if current_format is None else current_format,
                                      checkpoint=checkpoint)

    @checked
    def usage(self, *, top: int = 10, keep: int = 1) -> Record:
        """``store usage``: where the bytes are, the ``top`` largest threads and what a prune with
        ``keep`` would remove (``.reclaimable``, ``.largest_threads``, ...), aggregated in the database."""
        from symfonic_cli.limits import MAX_COUNT
        from symfonic_cli.storage.usage import usage_report

        for name, value in (("top", top), ("keep", keep)):
            if type(value) is not int or not 1 <= value <= MAX_COUNT:
                raise UsageError(f"{name} must be a whole number from 1 to {MAX_COUNT}")
        return Record(usage_report(self._store, top=top, keep=keep))

    @checked
    def matches(
        self,
        text: str,
        *,
        case_sensitive: bool = False,
        tools: bool = False,
        tenant: str | None = None,
        sub_tenant: str | None = None,
        session: str | None = None,
        inactive_for: str | None = None,
        inactive_since: str | None = None,
        active_within: str | None = None,
        limit: int | None = None,
    ) -> Stream:
        """``threads search``'s hits as they are found, thread by thread (a page of hits reads the
        threads it needs, not the store): ``Hit`` with ``.key .index .role .timestamp``, the message's
        ``.text`` and ``.snippet(width)``; ``to_json(width)`` is the command's record. The stream's
        ``.skipped``: the threads that could not be read, a line each with why (filled as it goes)."""
        from symfonic_cli.search.run import search

        if session is not None and not session:
            raise UsageError(f"{self._option('session')} is empty")
        window = activity_window(inactive_for, inactive_since, active_within, zone=self._zone)
        skipped: list[str] = []
        hits = search(self._store, text, case_sensitive=case_sensitive, tools=tools, tenant=tenant, sub_tenant=sub_tenant,
                      session=session, window=window, limit=limit, skipped=skipped)
        return Stream(hits, skipped=skipped, location=self.location)

    search = checked(_as_hit_rows(matches))

    def _option(self, name: str) -> str:
        """An argument as its caller spells it: ``--sub-tenant`` on a command line, ``sub_tenant`` here."""
        return "--" + name.replace("_", "-") if self._parsed else name
