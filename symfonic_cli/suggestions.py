"""Which threads a user may have meant by a key that names none (``transcript show``, ``thread erase``).

Up to five keys, near misses first: the same key once trimmed, case folded, NFKC normalised and
without invisible characters; then the same tenant and session under another sub-tenant (or none);
then the newest threads of the same tenant; a bare session id (``s-001``), the threads of that
session in every tenant. Only printed, never used in place of the key asked for.
"""

from __future__ import annotations

import unicodedata

from symfonic_cli.threadkey import parse_key

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from symfonic_cli.model.listing import ThreadSummary
    from symfonic_cli.stores.protocol import Store

LIMIT = 5


def loose_form(key: str) -> str:
    """What a near miss has in common with the key: no format characters (U+200B, U+FEFF, bidi
    marks), no whitespace of any kind, NFKC, case folded."""
    kept = "".join(c for c in key if not c.isspace() and unicodedata.category(c) != "Cf")
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", kept).casefold())


def _tenant_session(key: str) -> tuple[str, str] | None:
    parts = parse_key(key)
    if parts is not None:
        return parts.tenant, parts.session
    # "tenant:session", the sub-tenant left out
    tenant, sep, session = key.partition(":")
    return (tenant, session) if sep and tenant and session else None


class Suggester:
    """Suggestions against one store; its thread keys are read and indexed once, on the first
    miss, so a batch of many unknown keys costs one listing."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._loose: dict[str, list[str]] | None = None
        self._by_tenant: dict[str, list[str]] = {}
        self._by_tenant_session: dict[tuple[str, str], list[str]] = {}
        self._by_session: dict[str, list[str]] = {}

    def _index(self) -> dict[str, list[str]]:
        if self._loose is None:
            self._loose = {}
            for t in self.store.list_threads():  # newest activity first
                k = t.key
                self._loose.setdefault(loose_form(k), []).append(k)
                parts = parse_key(k)
                if parts is not None:
                    self._by_tenant.setdefault(parts.tenant, []).append(k)
                    self._by_tenant_session.setdefault((parts.tenant, parts.session), []).append(k)
                    self._by_session.setdefault(parts.session, []).append(k)
        return self._loose

    def suggest(self, key: str, limit: int = LIMIT) -> list[str]:
        loose = self._index()
        out: list[str] = []

        def add(candidates: Iterable[str]) -> None:
            for k in candidates:
                if len(out) >= limit:
                    return
                if k != key and k not in out:
                    out.append(k)

        add(loose.get(loose_form(key), ()))
        if ":" not in key:  # a session id alone: the threads holding it (acme:_:s-001 for s-001)
            add(self._by_session.get(key, ()))
        ts = _tenant_session(key)
        if ts is not None:
            add(self._by_tenant_session.get(ts, ()))
            add(_nearest(key, self._by_tenant.get(ts[0], ()), limit))
        return out

    def tenant_of(self, key: str) -> str | None:
        ts = _tenant_session(key)
        return ts[0] if ts else None


def suggest_threads(store: Store, key: str, limit: int = LIMIT) -> list[str]:
    return Suggester(store).suggest(key, limit)


def not_found_message(key: str, where: str, suggester: Suggester) -> str:
    near = suggester.suggest(key)
    head = f"no thread '{key}' in {where}"
    if near:
        return f"{head}; did you mean: " + ", ".join(f"'{k}'" for k in near)
    tenant = suggester.tenant_of(key)
    return f"{head}; tenant '{tenant}' has no threads" if tenant else head


def _nearest(key: str, candidates: Iterable[str], limit: int) -> list[str]:
    """The tenant's other threads, closest first. One cheap pass keeps the 50 sharing the longest
    prefix with ``key`` (a typo is usually near the end of a session id), whatever the tenant's
    size; those are ranked by similarity (difflib's ratio), then key order."""
    import heapq
    import os
    from difflib import SequenceMatcher

    near = heapq.nsmallest(50, candidates, key=lambda k: (-len(os.path.commonprefix((key, k))), abs(len(k) - len(key)), k))
    return sorted(near, key=lambda k: (-SequenceMatcher(None, key, k).ratio(), k))[: limit + 1]


def require_thread(store: Store, key: str) -> ThreadSummary:
    """The thread's summary, or NotFoundError (exit 3) naming the key and up to five threads it may
    have meant (near misses first). The CLI escapes the message."""
    from symfonic_cli.errors import NotFoundError

    summary = store.thread_summary(key)
    if summary is not None:
        return summary
    raise NotFoundError(not_found_message(key, store.location.display, Suggester(store)))
