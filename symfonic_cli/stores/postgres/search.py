"""PostgreSQL stores: the threads whose latest root checkpoint may hold a text (threads search)."""

from __future__ import annotations

from collections.abc import Iterator

from symfonic_cli.stores.postgres._common import PostgresSection, _translate_iter
from symfonic_cli.threadkey import tenant_prefix

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class PostgresSearch(PostgresSection):
    """``search_candidates`` (stores/protocol.py, SearchProtocol)."""

    @_translate_iter
    def search_candidates(self, prefilter: Any, *, tenant: str | None = None, sub_tenant: str | None = None) -> Iterator[str]:
        where = ""
        params: list[Any] = []
        if tenant is not None:
            cond, params = self._prefix_where(tenant_prefix(tenant, sub_tenant))
            where = "AND " + cond.removeprefix("WHERE ")
        # The latest root checkpoint of each thread, its messages blob as channel_versions names it,
        # streamed and tested here by the byte test every store uses (search/prefilter.py). The
        # server has no case-insensitive search of bytes: a text test needs encode(blob, 'escape')
        # (NUL bytes), which cost the server about five times the blob's transfer (measured at
        # 200,000 threads: 50 s against 10 s). An inline value, no blob or another type: decoded to decide.
        # (Keys grouped and joined in bytes under a nondeterministic collation: PostgresSection._key_grouped.)
        key = self._key_grouped()
        sql = (
            f"SELECT m.thread_id, c.checkpoint -> 'channel_values' ? 'messages' OR b.blob IS NULL OR b.type IS DISTINCT FROM 'msgpack', "
            "CASE WHEN NOT (c.checkpoint -> 'channel_values' ? 'messages') AND b.type = 'msgpack' THEN b.blob END "
            f"FROM (SELECT {key} AS thread_id, max(checkpoint_id) AS cid FROM checkpoints "
            f"WHERE checkpoint_ns = '' {where} GROUP BY {key}) m "
            f"JOIN checkpoints c ON {self._key_grouped('c.thread_id')} = m.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = m.cid "
            f"LEFT JOIN checkpoint_blobs b ON {self._key_is('b.thread_id', 'c.thread_id')} AND b.checkpoint_ns = '' AND b.channel = 'messages' "
            "AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages'"
        )
        for key, decode, blob in self._stream(sql, params):
            if decode or prefilter.may_match("msgpack", blob, whole_checkpoint=False):
                yield key
