"""PostgreSQL stores: the threads whose latest root checkpoint may hold a text (threads search)."""

from __future__ import annotations

from collections.abc import Iterator

from symfonic_cli.stores.postgres._common import PostgresSection, _translate_iter
from symfonic_cli.threadkey import tenant_prefix

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# search/prefilter.py's markers on encode(blob, 'escape'): bytes 0 and >= 0x80 as \ooo, "\" doubled.
_NOT_ONE_STRING = r"\\247content(?!\\2[4-7][0-7]|\\33[1-3])"
_TOOL_CALLS = r"\\252tool_calls(?!\\220)"


def escape_form(data: bytes) -> str:
    """``data`` as PostgreSQL's ``encode(data, 'escape')`` writes it."""
    return "".join(f"\\{b:03o}" if b == 0 or b >= 0x80 else ("\\\\" if b == 0x5C else chr(b)) for b in data)


class PostgresSearch(PostgresSection):
    """``search_candidates`` (stores/protocol.py, SearchProtocol)."""

    @_translate_iter
    def search_candidates(self, prefilter: Any, *, tenant: str | None = None, sub_tenant: str | None = None) -> Iterator[str]:
        where = ""
        params: list[Any] = []
        if tenant is not None:
            cond, params = self._prefix_where(tenant_prefix(tenant, sub_tenant))
            where = "AND " + cond.removeprefix("WHERE ")
        if not prefilter.anchors:
            held = "true"
        elif prefilter.folded:
            tests = ["strpos(lower(x.e), %s) > 0" for _ in prefilter.anchors]
            params += [escape_form(a) for a in prefilter.anchors]
            if prefilter.whole is not None:
                tests.append("(" + " OR ".join(["strpos(lower(x.e), %s) > 0"] + ["position(%s::bytea in b.blob) > 0"] * len(prefilter.exotic)) + ")")
                params += [escape_form(prefilter.whole), *prefilter.exotic]
            held = " AND ".join(tests)
        else:
            held = " AND ".join("position(%s::bytea in b.blob) > 0" for _ in prefilter.anchors)
            params += list(prefilter.anchors)
        markers = _NOT_ONE_STRING + ("|" + _TOOL_CALLS if prefilter.tools else "")
        params.append(markers)
        # The latest root checkpoint of each thread, its messages blob as channel_versions names it.
        # An inline value, no blob or another type: decoded to decide.
        # (Keys grouped and joined in bytes under a nondeterministic collation: PostgresSection._key_grouped.)
        key = self._key_grouped()
        sql = (
            f"SELECT m.thread_id FROM (SELECT {key} AS thread_id, max(checkpoint_id) AS cid FROM checkpoints "
            f"WHERE checkpoint_ns = '' {where} GROUP BY {key}) m "
            f"JOIN checkpoints c ON {self._key_grouped('c.thread_id')} = m.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = m.cid "
            f"LEFT JOIN checkpoint_blobs b ON {self._key_is('b.thread_id', 'c.thread_id')} AND b.checkpoint_ns = '' AND b.channel = 'messages' "
            "AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages' "
            "CROSS JOIN LATERAL (SELECT encode(b.blob, 'escape') AS e) x "
            "WHERE c.checkpoint -> 'channel_values' ? 'messages' OR b.blob IS NULL OR b.type IS DISTINCT FROM 'msgpack' "
            f"OR ({held}) OR x.e ~ %s"
        )
        for (key,) in self._stream(sql, params):
            yield key
