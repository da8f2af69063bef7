"""Which threads a user may have meant by a key that names none (``transcript show``, ``thread erase``).

Up to five keys, near misses first: the same key once trimmed, case folded, NFKC normalised and
without invisible characters; then the same tenant and session under another sub-tenant (or none);
then the newest threads of the same tenant. Only printed, never used in place of the key asked for.
"""

from __future__ import annotations

import unicodedata

from symfonic_cli.threadkey import parse_key

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
    """Suggestions against one store; its thread keys are read once, on the first miss."""

    def __init__(self, store) -> None:
        self.store = store
        self._keys: list[str] | None = None
        self._loose: dict[str, list[str]] | None = None

    def _all(self) -> list[str]:
        if self._keys is None:
            self._keys = [t.key for t in self.store.list_threads()]  # newest activity first
            self._loose = {}
            for k in self._keys:
                self._loose.setdefault(loose_form(k), []).append(k)
        return self._keys

    def suggest(self, key: str, limit: int = LIMIT) -> list[str]:
        keys = self._all()
        assert self._loose is not None
        out: list[str] = []

        def add(candidates) -> None:
            for k in candidates:
                if len(out) >= limit:
                    return
                if k != key and k not in out:
                    out.append(k)

        add(self._loose.get(loose_form(key), ()))
        ts = _tenant_session(key)
        if ts is not None:
            tenant, session = ts
            add(k for k in keys if (p := parse_key(k)) is not None and p.tenant == tenant and p.session == session)
            add(k for k in keys if k.startswith(tenant + ":"))
        return out

    def tenant_of(self, key: str) -> str | None:
        ts = _tenant_session(key)
        return ts[0] if ts else None


def suggest_threads(store, key: str, limit: int = LIMIT) -> list[str]:
    return Suggester(store).suggest(key, limit)
