"""SQLite stores: the compat report's reads: envelope metadata only, never a checkpoint blob."""

from __future__ import annotations

import json

from symfonic_cli.clock import ORDERED_ID_GLOB
from symfonic_cli.errors import StoreError
from symfonic_cli.stores._common import VALUE_GROUPED_FIELDS
from symfonic_cli.stores.sqlite._common import SqliteSection, _translate_errors, _translate_iter

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from symfonic_cli.model.envelope import EnvelopeRow, EnvelopeShape
    from typing import Any


# Older than the grace window's bound (an id, ``clock.id_at``): a UUIDv6 (any case) by its time,
# which its lowercase string order is; an id carrying no such time (an ISO-named checkpoint of
# very old LangGraph, another writer's) is never "in flight", so an unfinalized one is reported.
_OLDER = (f"CASE WHEN :older IS NULL THEN 0 WHEN lower(c.checkpoint_id) GLOB '{ORDERED_ID_GLOB}'"
          " THEN lower(c.checkpoint_id) < :older ELSE 1 END")


class SqliteCompat(SqliteSection):
    """The compat report's reads: envelope metadata only, never a checkpoint blob."""

    # -- compat (protocol docstrings in stores/protocol.py): json_type/json_extract over metadata only
    # (the saver stores metadata as a BLOB of JSON text; newer SQLite would read a BLOB as JSONB)

    @_translate_iter
    def envelope_shapes(self, envelope_key: str, *, older_than: str | None = None) -> Iterator[EnvelopeShape]:
        from symfonic_cli.model.envelope import EnvelopeShape

        # The big metadata text is parsed once per row to cut the envelope out (LIMIT -1 keeps
        # SQLite from flattening the subquery, which would re-parse it for every field). The small
        # envelope text is then parsed three times: one json_extract of five paths (a JSON array,
        # so type and value travel together; absent reads as null there, which decodes alike for
        # those four and package_version), the type of boundary_sequence, and the type of
        # safe_boundary (absent and null differ for it). An envelope text starting with '{' is an
        # object: no parse for that. Groups are per thread, in thread order (byte order, BINARY).
        # Latest checkpoints are counted by a second query over the (thread, max id) index groups:
        # a window over all rows would walk the table in index order, one random read per row.
        fields = [
            "CASE WHEN kind = 'object' THEN json_extract(env, "
            + ", ".join(f"'$.{f}'" for f in (*VALUE_GROUPED_FIELDS, "package_version"))
            + ") END",
            "CASE WHEN kind = 'object' THEN json_type(env, '$.boundary_sequence') END",
            "CASE WHEN kind = 'object' THEN json_type(env, '$.safe_boundary') END",
        ]
        keys = ", ".join(f"k{i}" for i in range(len(fields)))

        def grouped(source: str, *, by_thread: bool) -> str:
            tid = ", tid" if by_thread else ""
            return (
                f"SELECT kind, {keys}, older, rid, count(*){tid} FROM ("
                f" SELECT kind, {', '.join(f'{e} AS k{i}' for i, e in enumerate(fields))}, older, rid{tid} FROM ("
                f"  SELECT CASE WHEN substr(env, 1, 1) = '{{' THEN 'object' ELSE json_type(env) END AS kind,"
                f"   env, older, rid{tid} FROM ({source} LIMIT -1) LIMIT -1))"
                f" GROUP BY {'tid, ' if by_thread else ''}kind, {keys}, older, rid"
                + (" ORDER BY tid" if by_thread else "")
            )

        # Rows whose metadata SQLite's JSON functions could read differently from the saver's
        # Python json (see _python_only) keep their rowid as a group of their own, and are then
        # decoded in Python; the test runs once per row, in the same pass.
        def flagged(rows: str) -> str:
            return (
                "SELECT CASE WHEN py THEN NULL ELSE m -> :path END AS env, older, CASE WHEN py THEN rid END AS rid, tid"
                f" FROM (SELECT rid, older, m, tid, {_python_only('metadata', envelope_key, text='m')} AS py"
                f"  FROM (SELECT c.rowid AS rid, c.metadata AS metadata, CAST(c.metadata AS TEXT) AS m,"
                f"   c.thread_id AS tid, {_OLDER} AS older FROM {rows} LIMIT -1) LIMIT -1)"
            )

        every = flagged("checkpoints AS c")
        latest = flagged(
            "(SELECT thread_id, max(checkpoint_id) AS last FROM checkpoints WHERE checkpoint_ns = ''"
            "  GROUP BY thread_id) AS l"
            " JOIN checkpoints AS c ON c.thread_id = l.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = l.last"
        )
        params = {"path": _json_path(envelope_key), "older": older_than, **_python_only_params(envelope_key)}
        for row in self.conn.execute(grouped(every, by_thread=True), params):
            if row[5] is not None:
                found = self._python_shape(envelope_key, row[5], older_than)
                if found is not None:
                    yield found
                continue
            kind, shape, release = _shape_fields(row)
            yield EnvelopeShape(kind, **shape, older=bool(row[4]), checkpoints=row[6], package_version=release,
                                thread_id=str(row[7]))
        # The latest counts, in groups of their own (no thread, no checkpoints).
        for row in self.conn.execute(grouped(latest, by_thread=False), params):
            if row[5] is None:
                kind, shape, release = _shape_fields(row)
                yield EnvelopeShape(kind, **shape, older=bool(row[4]), latest=row[6], package_version=release)

    def _python_shape(self, envelope_key: str, rowid: int, older_than: str | None) -> EnvelopeShape | None:
        from symfonic_cli.model.envelope import ABSENT, EnvelopeShape, row_from_metadata

        sql = (
            f"SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.metadata, {_OLDER},"
            " c.checkpoint_ns = '' AND c.checkpoint_id = (SELECT max(m.checkpoint_id) FROM checkpoints AS m"
            "  WHERE m.thread_id = c.thread_id AND m.checkpoint_ns = '')"
            " FROM checkpoints AS c WHERE c.rowid = :rid"
        )
        found = self.conn.execute(sql, {"rid": rowid, "older": older_than}).fetchone()
        if found is None:  # deleted by a writer since the pass
            return None
        tid, ns, cid, meta, older, latest = found
        row = row_from_metadata(str(tid), ns, cid, meta, envelope_key)
        return EnvelopeShape(
            "absent" if row.envelope is ABSENT else "object",
            older=bool(older), checkpoints=1, latest=int(bool(latest)), thread_id=str(tid),
            metadata={} if row.envelope is ABSENT else {envelope_key: row.envelope},
            anomalies=row.anomalies, error=row.error,
        )

    @_translate_iter
    def iter_envelopes(self, envelope_key: str, *, thread: str | None = None) -> Iterator[EnvelopeRow]:
        from symfonic_cli.model.envelope import row_from_metadata

        # One thread (or one at a time): each row's metadata decoded as SqliteSaver decodes it.
        where = "WHERE thread_id = :thread" if thread is not None else ""
        sql = (
            "SELECT thread_id, checkpoint_ns, checkpoint_id, metadata FROM checkpoints "
            f"{where} ORDER BY thread_id, checkpoint_id DESC, checkpoint_ns"
        )
        for tid, ns, cid, meta in self.conn.execute(sql, {"thread": thread}):
            yield row_from_metadata(str(tid), ns, cid, meta, envelope_key)

    @_translate_errors
    def envelope_key_candidates(self, envelope_key: str, *, limit: int = 5) -> list[tuple[str, int]]:
        sql = (
            "SELECT j.key, count(*) FROM (SELECT CAST(metadata AS TEXT) AS m FROM checkpoints"
            "  WHERE json_valid(CAST(metadata AS TEXT)) LIMIT -1) AS c, json_each(c.m) AS j"
            " WHERE j.type = 'object' AND j.key != ?"
            " AND json_type(j.value, '$.format_version') IS NOT NULL"
            " AND json_type(j.value, '$.writer_line') IS NOT NULL"
            " GROUP BY j.key ORDER BY count(*) DESC, j.key LIMIT ?"
        )
        return [(str(k), n) for k, n in self.conn.execute(sql, (envelope_key, limit))]



def _shape_fields(row: tuple) -> tuple[str, dict, str | None]:
    """A grouped row's kind, EnvelopeShape fields and package_version (a string, else None)."""
    from symfonic_cli.model.envelope import ABSENT

    kind = _KIND.get(row[0], "absent")
    shape: dict = {}
    release = None
    if kind == "object":
        *values, release = json.loads(row[1])
        values = [v if not isinstance(v, (dict, list)) else type(v)() for v in values]
        shape = dict(zip(VALUE_GROUPED_FIELDS, values))
        if row[3] is None:
            shape["safe_boundary"] = ABSENT
        shape["boundary_sequence"] = _typed(row[2], _PLACEHOLDER.get(row[2]))
    return kind, shape, release if isinstance(release, str) else None


_KIND = {"null": "null", "true": "boolean", "false": "boolean", "integer": "integer", "real": "number",
         "text": "string", "array": "array", "object": "object"}


_PLACEHOLDER: dict[str, Any] = {"null": None, "true": True, "false": False, "integer": 0, "real": 0.0, "text": "",
                "array": [], "object": {}}


def _json_path(key: str) -> str:
    # A quoted label takes any key but one holding '"' (SQLite has no escape for it).
    if '"' in key:
        raise StoreError(f"an envelope key holding '\"' cannot be read from SQLite: {key!r}")
    return f'$."{key}"'


# Envelope fields whose repetition inside the metadata sends the row to Python (see _python_only).
_READ_FIELDS = ("format_version", "writer_line", "safe_boundary", "finalized", "boundary_sequence",
                "boundary_id", "package_version")


def _python_only(column: str, key: str, *, text: str | None = None) -> str:
    """SQL: true for rows whose metadata SQLite's JSON functions could read differently from the
    saver's ``json.loads`` (these are decoded in Python, exactly as the saver does):

    - not valid JSON to SQLite: NaN, Infinity, nesting deeper than SQLite reads, other encodings;
    - not a BLOB or TEXT, or holding a NUL byte (Python detects UTF-16/32 by them);
    - longer than 20,000 bytes (it may hold an integer beyond metadata_json.MAX_INT_DIGITS);
    - any backslash escape (an escaped key is the same key to Python), any multi-byte UTF-8
      sequence (lone surrogates among them: SQLite counts fewer characters than bytes);
    - the envelope key, or a field the report reads, written twice: SQLite reads the FIRST of
      duplicate keys, Python the LAST.
    Numbers need no test: json_extract of several paths returns each value's text verbatim, and
    Python parses it. Not caught: bytes that are not UTF-8 inside a JSON string where SQLite's
    character count still equals the byte count (stray continuation bytes); a GLOB over every
    character would find them but costs several times the whole report.
    """
    m = text or f"CAST({column} AS TEXT)"
    repeated = " OR ".join(
        f"instr(substr({m}, instr({m}, :q{i}) + 1), :q{i}) > 0" for i in range(len(_READ_FIELDS) + 1)
    )
    return (
        f"({column} IS NOT NULL AND (typeof({column}) NOT IN ('blob', 'text')"
        f" OR instr(CAST({column} AS BLOB), x'00') > 0 OR length(CAST({column} AS BLOB)) > 20000"
        f" OR NOT json_valid({m}) OR instr({m}, '\\') > 0 OR length({m}) != length(CAST({column} AS BLOB))"
        f" OR {repeated}))"
    )


def _python_only_params(key: str) -> dict[str, str]:
    return {f"q{i}": json.dumps(name) for i, name in enumerate((key, *_READ_FIELDS))}


def _typed(json_type: str | None, value: Any) -> Any:
    """A json_type/json_extract pair as the faithful Python value (booleans come back as 1/0)."""
    from symfonic_cli.model.envelope import ABSENT

    if json_type is None:
        return ABSENT
    if json_type in ("true", "false"):
        return json_type == "true"
    if json_type in ("array", "object"):
        return [] if json_type == "array" else {}
    if json_type == "null":
        return None
    return value
