"""PostgreSQL stores: the compat report's reads: envelope metadata only, never a checkpoint blob."""

from __future__ import annotations

from typing import Any

from symfonic_cli.stores._common import PLACEHOLDER_OF_KIND, VALUE_GROUPED_FIELDS
from symfonic_cli.stores.postgres._common import PostgresSection, _translate_errors, _translate_iter, is_ordered_id

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from symfonic_cli.model.envelope import EnvelopeRow, EnvelopeShape


# Older than the grace window's bound: a UUIDv6 (any case) by its time, which its lowercase string
# order is; NULL for an id in another form, dated in Python by its ``ts`` (the instant rule,
# clock.py), which the row's group then carries (``odd_ts``): never a string comparison.
_OLDER = ("CASE WHEN %(older)s::text IS NULL THEN false"
          f" WHEN {is_ordered_id('lower(checkpoint_id)')} THEN lower(checkpoint_id) COLLATE \"C\" < %(older)s"
          " END")


class PostgresCompat(PostgresSection):
    """The compat report's reads: envelope metadata only, never a checkpoint blob."""

    # -- compat (protocol docstrings in stores/protocol.py): JSONB operators over metadata only

    @_translate_iter
    def envelope_shapes(self, envelope_key: str, *, older_than: str | None = None) -> Iterator[EnvelopeShape]:
        from symfonic_cli.clock import bound_time, ts_time
        from symfonic_cli.model.envelope import EnvelopeShape

        # Values group by their JSON text, so 1 and 1.0 (equal as jsonb) stay apart.
        inner = []
        for f in VALUE_GROUPED_FIELDS:
            inner.append(f"CASE WHEN kind = 'object' THEN {_kind_sql(f'env -> {_lit(f)}')} END AS {f}_t")
            inner.append(
                f"CASE WHEN kind = 'object' AND jsonb_typeof(env -> {_lit(f)}) NOT IN ('object', 'array') "
                f"THEN (env -> {_lit(f)})::text END AS {f}_v"
            )
        inner.append(f"CASE WHEN kind = 'object' THEN {_kind_sql(_lit_path('env', 'boundary_sequence'))} END AS bs_t")
        # The release that wrote it: a JSON string, else none (as decode_envelope reads it).
        inner.append("CASE WHEN kind = 'object' AND jsonb_typeof(env -> 'package_version') = 'string' "
                     "THEN env ->> 'package_version' END AS pv")
        groups = [f"{f}_{s}" for f in VALUE_GROUPED_FIELDS for s in ("t", "v")] + ["bs_t"]
        # Groups are per thread, a thread's groups one after another (byte order).
        # Rows Python's json reads differently (see _PYTHON_ONLY) are tested once, in this pass,
        # and come out one per group with their metadata text, to be decoded in Python.
        py = ["py_tid", "py_ns", "py_cid", "py_meta"]
        # One pass in the table's order (no index walk), grouped by thread and shape first (a
        # thread's groups are few): the sort and the window then take the groups, not the rows.
        # A group's ``gmax`` is its newest root checkpoint's id; the group holding the thread's
        # newest (ids are unique in a thread and namespace) holds its latest root checkpoint.
        # (OFFSET 0: each level's values computed once a row, not again in every expression naming them.)
        # ``older`` is read only where the report reads it, for unfinalized envelopes (and the
        # rows decoded in Python, which may be): elsewhere false, grouping nothing apart.
        unfinalized = "python_only OR (jsonb_typeof(metadata -> %(key)s) = 'object' AND metadata -> %(key)s -> 'finalized' = 'false'::jsonb)"
        cols = f"kind, {', '.join(groups)}, older, {', '.join(py)}, pv, tid, odd_ts"
        sql = (
            f"SELECT kind, {', '.join(groups)}, older, n, (gmax = max(gmax) OVER (PARTITION BY tid))::int, {', '.join(py)}, pv, tid, odd_ts"
            f" FROM (SELECT {cols}, count(*) AS n, max(cid) FILTER (WHERE root) AS gmax FROM ("
            f" SELECT kind, {', '.join(inner)}, older, root, cid, {', '.join(py)}, tid, odd_ts FROM ("
            f"  SELECT CASE WHEN NOT python_only THEN {_kind_sql('metadata -> %(key)s')} END AS kind,"
            "   CASE WHEN NOT python_only THEN metadata -> %(key)s END AS env, older, root, checkpoint_id AS cid,"
            '   thread_id COLLATE "C" AS tid,'
            f"   CASE WHEN python_only THEN {self._key_grouped()} END AS py_tid, CASE WHEN python_only THEN checkpoint_ns END AS py_ns,"
            "   CASE WHEN python_only THEN checkpoint_id END AS py_cid,"
            "   CASE WHEN python_only THEN metadata::text END AS py_meta,"
            "   CASE WHEN older IS NULL THEN coalesce(checkpoint ->> 'ts', '') END AS odd_ts FROM ("
            "   SELECT thread_id, checkpoint_ns, checkpoint_id, metadata, checkpoint, checkpoint_ns = '' AS root,"
            f"    CASE WHEN {unfinalized} THEN {_OLDER} ELSE false END AS older, python_only FROM ("
            f"    SELECT thread_id, checkpoint_ns, checkpoint_id, metadata, checkpoint, {_PYTHON_ONLY} AS python_only"
            "    FROM checkpoints OFFSET 0) AS p) AS r OFFSET 0) AS m) AS e"
            f" GROUP BY tid, {cols.removesuffix(', tid, odd_ts')}, odd_ts) AS g"
            " ORDER BY tid"
        )
        params = {"key": envelope_key, "older": older_than}
        bound = bound_time(older_than) if older_than is not None else None
        for row in self._stream(sql, params, jit=False):
            if row[10] is None:  # an id in another form: by its ts; without one (undatable) never in flight
                when = ts_time(row[19] or None)
                row = (*row[:10], when is None or bound is None or when < bound, *row[11:])
            if row[13] is not None:
                yield self._python_shape(envelope_key, row)
                continue
            kind = row[0] or "absent"
            fields = {}
            if kind == "object":
                for i, f in enumerate(VALUE_GROUPED_FIELDS):
                    fields[f] = _typed(row[1 + 2 * i], row[2 + 2 * i])
                fields["boundary_sequence"] = _typed(row[9], None)
            yield EnvelopeShape(kind, **fields, older=bool(row[10]), checkpoints=row[11], latest=row[12] or 0,
                                package_version=row[17], thread_id=str(row[18]))

    @staticmethod
    def _python_shape(envelope_key: str, row: tuple) -> EnvelopeShape:
        """One row whose metadata Python's json reads differently from JSONB (see _PYTHON_ONLY)."""
        from symfonic_cli.model.envelope import ABSENT, EnvelopeShape, row_from_metadata

        tid, ns, cid, meta = row[13:17]
        decoded = row_from_metadata(str(tid), ns, cid, meta, envelope_key)
        return EnvelopeShape(
            "absent" if decoded.envelope is ABSENT else "object",
            older=bool(row[10]), checkpoints=row[11], latest=row[12] or 0, thread_id=str(tid),
            metadata={} if decoded.envelope is ABSENT else {envelope_key: decoded.envelope},
            anomalies=decoded.anomalies, error=decoded.error,
        )

    @_translate_iter
    def iter_envelopes(self, envelope_key: str, *, thread: str | None = None) -> Iterator[EnvelopeRow]:
        from symfonic_cli.model.envelope import row_from_metadata

        # Each row's metadata decoded as PostgresSaver's driver decodes it (Python json), limits applied.
        where = f"WHERE {self._key_is(value='%(thread)s')}" if thread is not None else ""
        sql = (
            "SELECT thread_id, checkpoint_ns, checkpoint_id, metadata::text "
            f'FROM checkpoints {where} ORDER BY thread_id COLLATE "C", checkpoint_id DESC, checkpoint_ns COLLATE "C"'
        )
        for tid, ns, cid, meta in self._stream(sql, {"thread": thread}):
            yield row_from_metadata(str(tid), ns, cid, meta, envelope_key)

    @_translate_errors
    def envelope_key_candidates(self, envelope_key: str, *, limit: int = 5) -> list[tuple[str, int]]:
        sql = (
            "SELECT j.key, count(*) FROM checkpoints, "
            "jsonb_each(CASE WHEN jsonb_typeof(metadata) = 'object' THEN metadata ELSE '{}'::jsonb END) AS j "
            "WHERE jsonb_typeof(j.value) = 'object' AND j.key <> %s "
            "AND j.value ? 'format_version' AND j.value ? 'writer_line' "
            'GROUP BY j.key ORDER BY count(*) DESC, j.key COLLATE "C" LIMIT %s'
        )
        return [(str(k), n) for k, n in self.conn.execute(sql, (envelope_key, limit))]



# Metadata Python's json cannot read within symfonic's limits (symfonic_cli/codec/metadata_json.py):
# an integer of more digits than MAX_INT_DIGITS (JSONB keeps any number exactly), or nesting
# deeper than MAX_DEPTH (the metadata is level 1). Those rows are decoded in Python, as the
# saver's driver would, so the store-wide report reads them as a thread's report does. Both
# need more than 4,000 bytes of text (a number of 20,001 digits, JSONB writing every digit;
# 2,001 nested brackets, each opened and closed): the text's length is tested first, and costs a
# fraction of the paths' walk of every value (a second of the report's pass at 200,000 threads).
_PYTHON_ONLY = (
    "(octet_length(metadata::text) > 4000 AND (jsonb_path_exists(metadata, 'strict $.** ? (@.type() == \"number\" && (@ >= 1e20000 || @ <= -1e20000))') OR "
    "jsonb_path_exists(metadata, 'strict $.**{2000} ? (@.type() == \"array\" || @.type() == \"object\")')))"
)


def _lit(text: str) -> str:
    # Field names here are our own constants, never user input.
    assert text.isidentifier()
    return f"'{text}'"


def _lit_path(base: str, field: str) -> str:
    return f"{base} -> {_lit(field)}"


def _kind_sql(expr: str) -> str:
    """The protocol's JSON kind of a jsonb expression (NULL when absent); integers told from numbers by their text."""
    return (
        f"CASE jsonb_typeof({expr}) WHEN 'number' THEN "
        f"CASE WHEN ({expr})::text ~ '^-?[0-9]+$' THEN 'integer' ELSE 'number' END "
        f"ELSE jsonb_typeof({expr}) END"
    )


def _typed(kind: str | None, text: str | None) -> Any:
    """A (kind, JSON text) pair as the faithful Python value; placeholders for nested values."""

    from symfonic_cli.model.envelope import ABSENT

    if kind is None:
        return ABSENT
    if kind in ("array", "object") or text is None:
        return PLACEHOLDER_OF_KIND[kind]
    from symfonic_cli.codec.metadata_json import loads

    return loads(text)  # rows beyond its limits never get here (_PYTHON_ONLY)
