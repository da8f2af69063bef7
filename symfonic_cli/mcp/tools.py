"""The MCP tools, free of the SDK: each reads through the Python API (``symfonic_cli.api.Store``)
inside the session's scope and returns an ``Answer``; ``Reader.call`` escapes and caps it, turns
errors into one safe line and writes the access-log record. ``server.py`` gives them to the SDK.

Records are read with ``json_view()``, not ``to_json()``: nothing here changes an answer in place
(escaping and the caps build new values), so the API's defensive deep copy is not paid per row."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from symfonic_cli.errors import NotFoundError, SymfonicError, UsageError
from symfonic_cli.mcp.accesslog import AccessLog
from symfonic_cli.mcp.answer import Answer, Caps, escaped, prepare
from symfonic_cli.mcp.scope import Scope
from symfonic_cli.vocabulary import DEFAULT_SORT, SORTS, listed

TOOLS = (
    "list_threads", "search_messages", "get_transcript", "get_thread_state", "get_history",
    "diff_checkpoints", "compat_report", "store_usage",
)
_OLDEST = datetime.min.replace(tzinfo=timezone.utc)
# Fields of a command's JSON that name the store itself (its location): never in an answer.
_STORE_FIELDS = ("store",)
# Set by the server around each tools/call: the outcomes recorded while it ran (server.py logs a
# call the SDK refused before any tool ran, which left it empty).
CALL_RECORDS: ContextVar[list[str] | None] = ContextVar("symfonic_mcp_call_records", default=None)


class ToolFailure(Exception):
    """A tool call that has no answer: one line for the client (never the store's location)."""

    def __init__(self, line: str, outcome: str) -> None:
        super().__init__(line)
        self.outcome = outcome


@dataclass(frozen=True)
class Result:
    structured: dict[str, Any]  # {"result": ..., "truncated": bool}
    answer: Answer
    result_json: str  # structured["result"] as compact JSON (for the text block)


def _positive(name: str, value: int | None) -> None:
    if value is not None and (type(value) is not int or value < 1):
        raise UsageError(f"{name} must be a whole number of at least 1")


def _key(key: str) -> None:
    if not isinstance(key, str) or not key:
        raise UsageError("key is a non-empty thread key tenant:sub:session")


def _sort(sort: str | None) -> str:
    """``sort`` checked before any store is asked (a scope that leaves no grant still refuses it)."""
    chosen = DEFAULT_SORT if sort is None else sort.lower() if isinstance(sort, str) else ""
    if chosen not in SORTS:
        raise UsageError(f"unknown sort '{sort}'", hint=f"use one of: {listed(SORTS)}")
    return chosen


# The order of threads list --sort (threadstate/listing.py), on the API's rows: largest first.
_ORDER: dict[str, Callable[[Any], Any]] = {
    "last-activity": lambda r: r.last_activity or _OLDEST, "first-activity": lambda r: r.first_activity or _OLDEST,
    "checkpoints": lambda r: r.checkpoints, "size": lambda r: r.size_bytes or 0,
}


def _merge(rows: list[Any], chosen: str, reverse: bool) -> None:
    """Several grants' listings as one listing of their union would be ordered."""
    rows.sort(key=lambda r: r.key)
    rows.sort(key=_ORDER[chosen], reverse=True)
    if reverse:
        rows.reverse()


def _public(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: v for k, v in doc.items() if k not in _STORE_FIELDS}
    return doc


class Reader:
    """One store (opened read-only when the server starts), one scope, the caps and the log."""

    def __init__(self, store: Any, scope: Scope, caps: Caps, log: AccessLog | None,
                 reconnect: Callable[[], Any] | None = None) -> None:
        self.store = store  # symfonic_cli.api.Store
        self.scope = scope
        self.caps = caps
        self.log = log
        # After a store error: a new Store when the connection was lost (a server restarted, its
        # backend terminated), else None. The call is then tried once more on it.
        self.reconnect = reconnect

    def _run(self, method: Callable[..., Answer], given: dict[str, Any]) -> Answer:
        try:
            return method(**given)
        except (NotFoundError, UsageError):
            raise
        except SymfonicError:
            store = self.reconnect() if self.reconnect is not None else None
            if store is None:
                raise
            self.store = store
        return method(**given)

    # -- the frame every call goes through -------------------------------------------------
    def call(self, tool: str, arguments: dict[str, Any]) -> Result:
        """Run ``tool``; raise ``ToolFailure`` with a safe line when it has no answer. Either
        way one access-log record is written (and flushed) before this returns."""
        method: Callable[..., Answer] = getattr(self, tool)
        given = {k: v for k, v in arguments.items() if v is not None}
        try:
            answer = self._run(method, given)
        except NotFoundError as exc:
            # The same words for a missing key and one outside the scope (never the store's
            # suggestions, which would name other tenants' keys, nor its location).
            self._record(tool, given, Answer(None), "not-found")
            key = str(given.get("key", ""))
            if str(exc).startswith(f"no thread '{key}'"):
                raise ToolFailure(f"no thread '{escaped(key)}' in this store", "not-found") from None
            raise ToolFailure(f"thread '{escaped(key)}' has no such checkpoint", "not-found") from None
        except UsageError as exc:
            self._record(tool, given, Answer(None), "usage")
            raise ToolFailure(escaped(exc.line()), "usage") from None
        except SymfonicError as exc:
            self._record(tool, given, Answer(None), "store-error")
            raise ToolFailure(f"the store could not answer ({type(exc).__name__}, exit code {exc.exit_code})", "store-error") from None
        data, cut, text = prepare(_public(answer.data), self.caps)
        answer.truncated = answer.truncated or cut
        if isinstance(data, list):
            kept = len(data)
            answer.keys = answer.keys[:kept] if answer.rows == len(answer.keys) else answer.keys
            answer.rows = kept
        self._record(tool, given, answer, "ok")
        return Result({"result": data, "truncated": answer.truncated}, answer, text)

    def _record(self, tool: str, arguments: dict[str, Any], answer: Answer, outcome: str) -> None:
        records = CALL_RECORDS.get()
        if records is not None:
            records.append(outcome)
        if self.log is not None:
            self.log.write(tool, arguments, keys=list(dict.fromkeys(answer.keys)), rows=answer.rows,
                           truncated=answer.truncated, outcome=outcome)

    def refused(self, tool: Any, arguments: Any) -> None:
        """The record of a call refused before the tool ran (an unknown tool, arguments its schema
        rejects): what the client sent, nothing returned."""
        name = tool if isinstance(tool, str) else repr(tool)
        given = arguments if isinstance(arguments, dict) else {"arguments": arguments}
        self._record(name, given, Answer(None), "refused")

    def _in_scope(self, key: str) -> None:
        _key(key)
        if not self.scope.allows(key):
            raise NotFoundError(f"no thread '{key}'")

    def _fetch(self, limit: int | None) -> int:
        """How many rows to ask the store for: the tool's limit, and never more than one past the cap
        (the one past tells that the answer was cut)."""
        _positive("limit", limit)
        return min(limit or self.caps.rows + 1, self.caps.rows + 1)

    # -- the tools --------------------------------------------------------------------------
    def list_threads(self, tenant: str | None = None, sub_tenant: str | None = None, session: str | None = None,
                     status: list[str] | str | None = None, inactive_for: str | None = None, inactive_since: str | None = None,
                     active_within: str | None = None, since: str | None = None, until: str | None = None,
                     sort: str | None = None, reverse: bool = False, with_size: bool = False,
                     limit: int | None = None) -> Answer:
        fetch = self._fetch(limit)
        chosen = _sort(sort)
        grants = self.scope.narrow(tenant, sub_tenant)
        # Merging several grants' listings by size needs the sizes, shown only when asked for.
        sized = with_size or (chosen == "size" and len(grants) > 1)
        rows: list[Any] = []
        for t, s in grants:
            rows += self.store.threads(tenant=t, sub_tenant=s, session=session, status=status, with_size=sized,
                                       limit=fetch, inactive_for=inactive_for, inactive_since=inactive_since,
                                       active_within=active_within, since=since, until=until, sort=sort,
                                       reverse=reverse)
        if len(grants) > 1:  # one listing per grant, merged in the order each is in
            _merge(rows, chosen, reverse)
        rows = rows[:fetch]
        docs = [r.json_view() for r in rows]
        if sized and not with_size:
            docs = [{k: v for k, v in d.items() if k != "size_bytes"} for d in docs]
        return Answer(docs, [d["key"] for d in docs], len(rows))

    def search_messages(self, text: str, case_sensitive: bool = False, tools: bool = False, tenant: str | None = None,
                        sub_tenant: str | None = None, session: str | None = None, inactive_for: str | None = None,
                        inactive_since: str | None = None, active_within: str | None = None,
                        limit: int | None = None) -> Answer:
        fetch = self._fetch(limit)
        hits: list[Any] = []
        for t, s in self.scope.narrow(tenant, sub_tenant):
            if len(hits) >= fetch:
                break
            hits += self.store.search(text, case_sensitive=case_sensitive, tools=tools, tenant=t, sub_tenant=s,
                                      session=session, inactive_for=inactive_for, inactive_since=inactive_since,
                                      active_within=active_within, limit=fetch - len(hits))
        docs = [h.json_view() for h in hits]
        return Answer(docs, [d["key"] for d in docs], len(hits))

    def get_transcript(self, key: str, index: int | None = None, since: str | None = None, until: str | None = None,
                       speaker: str = "all", limit: int | None = None, tools: bool = False, resume_window: bool = False,
                       max_entries: int | None = None) -> Answer:
        self._in_scope(key)
        if resume_window or max_entries is not None:
            # transcript show --resume-window: the turns symfonic-core's restart-resume recalls.
            if not resume_window:
                raise UsageError("max_entries needs resume_window")
            given = {"index": index is not None, "since": since is not None, "until": until is not None,
                     "speaker": speaker != "all", "limit": limit is not None, "tools": bool(tools)}
            others = [name for name, on in given.items() if on]
            if others:
                raise UsageError(f"resume_window answers what a restart recalls; it does not take {', '.join(others)}")
            recalled = self.store.resume_window(key, **({} if max_entries is None else {"max_entries": max_entries}))
            return Answer([r.to_json() for r in recalled], [key], len(recalled))
        rows = self.store.transcript(key, index=index, since=since, until=until, speaker=speaker,
                                     limit=self._fetch(limit), tools=tools)
        return Answer([r.to_json(tools) for r in rows], [key], len(rows))

    def get_thread_state(self, key: str) -> Answer:
        self._in_scope(key)
        return Answer(self.store.thread_state(key).json_view(), [key], 1)

    def get_history(self, key: str, namespace: str | None = None, limit: int | None = None) -> Answer:
        self._in_scope(key)
        entries = self.store.history(key, namespace=namespace, limit=self._fetch(limit))
        return Answer([e.to_json() for e in entries], [key], len(entries))

    def diff_checkpoints(self, key: str, a: str = "-2", b: str = "-1", namespace: str | None = None) -> Answer:
        self._in_scope(key)
        return Answer(self.store.diff(key, a, b, namespace=namespace).to_json(), [key], 1)

    def compat_report(self, key: str | None = None) -> Answer:
        if key is not None:
            self._in_scope(key)
            return Answer(self.store.compat_report(thread=key).to_json(), [key], 1)
        if self.scope.everything:
            return Answer(self.store.compat_report().to_json(), [], 1)
        # Scoped: the report of each thread in the scope (a store-wide one counts other tenants).
        keys = self._scoped_keys()
        reports = [self.store.compat_report(thread=k).to_json() for k in keys]
        return Answer(reports, keys, len(reports))

    def store_usage(self, top: int = 10) -> Answer:
        _positive("top", top)
        if self.scope.everything:
            return Answer(self.store.usage(top=min(top, self.caps.rows + 1)).json_view(), [], 1)
        # Scoped: the granted threads' own sizes only (the store's totals are every tenant's),
        # summed as the listing streams: memory follows the rows shown, not the threads granted.
        shown = min(top, self.caps.rows)  # the rows cap here, so that the log names what was shown
        seen = [0, 0]  # threads, bytes

        def sized() -> Iterator[dict[str, Any]]:
            for t, s in self.scope.narrow(None, None):
                for rec in self.store.listing(tenant=t, sub_tenant=s, with_size=True):
                    seen[0] += 1
                    seen[1] += rec["size_bytes"] or 0
                    yield rec

        # nlargest is sorted(..., reverse=True)[:n]: ties keep the listing's order, as the sort did.
        rows = heapq.nlargest(shown, sized(), key=lambda r: r["size_bytes"] or 0)
        largest = [{"key": r["key"], "checkpoints": r["checkpoints"], "size_bytes": r["size_bytes"]} for r in rows]
        doc = {"scope": self.scope.describe(), "threads": seen[0], "size_bytes": seen[1], "largest_threads": largest}
        return Answer(doc, [r["key"] for r in largest], len(largest), truncated=shown < top and seen[0] > shown)

    def _scoped_keys(self) -> list[str]:
        keys: list[str] = []
        for t, s in self.scope.narrow(None, None):
            keys += [r.key for r in self.store.threads(tenant=t, sub_tenant=s, limit=self.caps.rows + 1)]
        return keys[: self.caps.rows + 1]
