"""SQLite stores: the threads whose latest root checkpoint may hold a text (threads search)."""

from __future__ import annotations

from collections.abc import Iterator

from symfonic_cli.stores.sqlite._common import _translate_iter
from symfonic_cli.threadkey import tenant_prefix


class SqliteSearch:
    """``search_candidates`` (stores/protocol.py, SearchProtocol)."""

    @_translate_iter
    def search_candidates(self, prefilter, *, tenant: str | None = None, sub_tenant: str | None = None) -> Iterator[str]:
        from symfonic_cli.stores.sqlite.read import _key_text

        where, params = "", []
        if tenant is not None:
            cond, params = self._prefix_where(tenant_prefix(tenant, sub_tenant))
            where = "AND " + cond
        tests = []
        if prefilter.anchors and (self.utf8 or not prefilter.folded):
            # instr on the bytes; folded: on the bytes read as (UTF-8) text, ASCII-lower-cased.
            target = "lower(CAST(c.checkpoint AS TEXT))" if prefilter.folded else "c.checkpoint"
            held = [f"instr({target}, ?) > 0" for _ in prefilter.anchors]
            params += [a.decode("ascii") if prefilter.folded else a for a in prefilter.anchors]
            if prefilter.whole is not None:
                held.append("(" + " OR ".join([f"instr({target}, ?) > 0"] + ["instr(c.checkpoint, ?) > 0"] * len(prefilter.exotic)) + ")")
                params += [prefilter.whole.decode("ascii"), *prefilter.exotic]
            tests.append("(" + " AND ".join(held) + ")")
        elif prefilter.anchors:
            # UTF-16 text would not read the bytes as they are: the same test in Python.
            self.conn.create_function("symfonic_holds_anchors", 1, lambda b: isinstance(b, bytes) and prefilter.holds_anchors(b), deterministic=True)
            tests.append("symfonic_holds_anchors(c.checkpoint)")
        else:
            tests.append("1")
        self.conn.create_function(
            "symfonic_needs_decode", 1,
            lambda b: not isinstance(b, bytes) or prefilter.needs_decode(b, whole_checkpoint=True), deterministic=True,
        )
        # The latest root checkpoint of each thread by the primary key; its blob tested only there.
        sql = (
            "SELECT m.thread_id FROM (SELECT thread_id, max(checkpoint_id) AS cid FROM checkpoints "
            f"WHERE checkpoint_ns = '' {where} GROUP BY thread_id) m "
            "JOIN checkpoints c ON c.thread_id = m.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = m.cid "
            f"WHERE c.type IS NOT 'msgpack' OR {tests[0]} OR symfonic_needs_decode(c.checkpoint)"
        )
        for (key,) in self.conn.execute(sql, params):
            yield _key_text(key)
