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


# Older than the grace window's bound (an id, ``clock.id_at``), read only for unfinalized
# envelopes (the report reads ``older`` for nothing else): a UUIDv6 (any case) by its time, which
# its lowercase string order is; NULL for an id in another form, which Python dates by the
# instant rule (its ``ts``, ``_older_by_ts``): never a string comparison.
def _older_by_id(cid: str) -> str:
    return f"CASE WHEN :older IS NULL THEN 0 WHEN lower({cid}) GLOB '{ORDERED_ID_GLOB}' THEN lower({cid}) < :older END"


_OLDER_BY_ID = _older_by_id("cid")


class SqliteCompat(SqliteSection):
    """The compat report's reads: envelope metadata only, never a checkpoint blob."""

    # -- compat (protocol docstrings in stores/protocol.py): json_type/json_extract over metadata only
    # (the saver stores metadata as a BLOB of JSON text; newer SQLite would read a BLOB as JSONB)

    @_translate_iter
    def envelope_shapes(self, envelope_key: str, *, older_than: str | None = None) -> Iterator[EnvelopeShape]:
        from symfonic_cli.clock import bound_time
        from symfonic_cli.model.envelope import EnvelopeShape

        # One pass over every row, in two levels (the inner a subquery SQLite does not flatten,
        # LIMIT -1; a level costs a copy of every value it passes on). The inner level tests
        # each row once (see _envelope) and cuts the envelope out of the metadata text, parsed
        # once: ``env`` is the envelope's JSON text, NULL when absent, and the BLOB x'00'
        # (which -> never returns) for a row to decode in Python, whose rowid (``prid``) then
        # makes a group of its own. The outer level parses the small envelope text three times:
        # one json_extract of five paths (a JSON array, so type and value travel together; absent
        # reads as null there, which decodes alike for those four and package_version), the type
        # of boundary_sequence, and the type of safe_boundary (absent and null differ for it). An
        # envelope text starting with '{' is an object (-> returns it minified): no parse for that.
        # ``older`` is read for unfinalized envelopes only (the report reads it for nothing else);
        # one whose id is in another form keeps its rowid (``orid``): its ``ts`` dates it.
        # Groups are per thread, in thread order (byte order, BINARY). Latest checkpoints are
        # counted by a second query over the (thread, max id) index groups: a window over all rows
        # would walk the table in index order, one random read per row. The pass over every row
        # also counts the census's values and the rows that could name another envelope key.
        # Comparisons, not function calls, where a row has no envelope (most rows of most stores):
        # an object's text starts with '{' (which sorts before '|'); the Python rows' BLOB is x'00'.
        obj = "env >= '{' AND env < '|'"
        kind = f"CASE WHEN env IS NULL OR env >= x'' THEN NULL WHEN {obj} THEN 'object' ELSE json_type(env) END"
        fields = [
            f"CASE WHEN {obj} THEN json_extract(env, "
            + ", ".join(f"'$.{f}'" for f in (*VALUE_GROUPED_FIELDS, "package_version"))
            + ") END",
            f"CASE WHEN {obj} THEN json_type(env, '$.boundary_sequence') END",
            f"CASE WHEN {obj} THEN json_type(env, '$.safe_boundary') END",
        ]
        # The id is read (by rowid) for unfinalized envelopes only: no level passes it on.
        older_sql = (f"CASE WHEN {obj} AND json_type(env, '$.finalized') = 'false'"
                     f" THEN {_older_by_id('(SELECT checkpoint_id FROM checkpoints WHERE rowid = rid)')} ELSE 0 END")
        prid = f"CASE WHEN env = x'00' OR ({obj} AND ({_fields_repeated('env')})) THEN rid END"
        # The CASE reads the metadata column where it tests it (a level passing it on as a value
        # cost more, measured, even with blobs of 140 KB: SQLite keeps the row's overflow pages'
        # places). Only numbers and the thread pass on besides: the census's counts, not the type.
        # ``lat``: the row is its thread's latest root checkpoint (the latest counts come from this
        # one pass, not from reading every thread's latest row again). Where a thread's latest root
        # id is one row (_latest_is_one_row), each group passes on its greatest root id (``lat``
        # holds the row's, NULL off the root namespace), compared with its thread's by one index
        # seek a group; else a seek a row (a seek a row was a fifth of the report's instructions).
        by_group = self._latest_is_one_row()
        latest = self._key_is("m.thread_id", "tid" if by_group else "c.thread_id")
        latest = f"(SELECT max(m.checkpoint_id) FROM checkpoints AS m WHERE {latest} AND m.checkpoint_ns = '')"
        if by_group:
            lat, lat_sum = "CASE WHEN c.checkpoint_ns = '' THEN c.checkpoint_id END", f"coalesce(max(lat) = {latest}, 0)"
        else:
            lat, lat_sum = f"c.checkpoint_ns = '' AND c.checkpoint_id = {latest}", "coalesce(sum(lat), 0)"
        inner = (
            "SELECT c.rowid AS rid, c.thread_id AS tid, instr(c.type, '+') > 0 AS enc, c.type IS NOT NULL AS typed,"
            f" {lat} AS lat, {_envelope('c.metadata')} AS env FROM {{rows}}"
        )

        # A row's group is its thread and ONE key: NULL without an envelope (most rows of most
        # stores: nothing more to compute or compare), else the JSON array of what decides its
        # verdict (kind, the three field reads, older, prid, orid), unpacked per group below.
        orid = f"CASE WHEN {older_sql} IS NULL THEN rid END"
        # (x'01' rows, no envelope but a format_version named: the key 'o', counted apart.)
        key = (f"CASE WHEN env IS NULL THEN NULL WHEN env = x'01' THEN 'o'"
               f" ELSE json_array({kind}, {', '.join(fields)}, {older_sql}, {prid}, {orid}) END")
        # Ordered as grouped (thread, key): the group's sort is the only one.
        every = (
            f"SELECT {key}, count(*), coalesce(sum(enc), 0), sum(typed), tid, {lat_sum}"
            f" FROM ({inner.replace('{rows}', 'checkpoints AS c')} LIMIT -1) GROUP BY tid COLLATE BINARY, 1 ORDER BY tid COLLATE BINARY, 1"
        )
        params = {"path": _json_path(envelope_key), "older": older_than, **_python_only_params(envelope_key)}
        bound = bound_time(older_than) if older_than is not None else None
        encrypted = plain = candidates = 0
        known: dict[str | None, dict] = {}  # a key's fields, decoded once (most keys repeat thread after thread)
        for packed, n, enc, typed, tid, lat in self.conn.execute(every, params):
            encrypted, plain = encrypted + enc, plain + typed - enc
            fields_of = known.get(packed)
            if fields_of is None:
                row = _unpacked(packed)
                if packed == "o" or row[5] is not None:  # rows that may hold an envelope under another key
                    candidates += n
                if row[5] is not None:
                    found = self._python_shape(envelope_key, row[5], older_than, bound)
                    if found is not None:
                        yield found
                    continue
                if row[6] is not None:  # an id in another form: dated by its ts, row by row
                    kind, shape, release = _shape_fields(row)
                    yield EnvelopeShape(kind, **shape, older=self._older_by_ts(row[6], bound), checkpoints=n,
                                        package_version=release, thread_id=str(tid), latest=lat)
                    continue
                kind, shape, release = _shape_fields(row)
                fields_of = known[packed] = {"kind": kind, **shape, "older": bool(row[4]), "package_version": release}
            elif packed == "o":
                candidates += n
            yield EnvelopeShape(**fields_of, checkpoints=n, thread_id=str(tid), latest=lat)
        self._pass_census, self._pass_candidates = (encrypted, plain), candidates

    def _latest_is_one_row(self) -> bool:
        """Whether a thread's latest root checkpoint id is held by one row: ids compare as bytes (no
        collation declared: under NOCASE two ids can both be the greatest) and a unique index over
        (thread, namespace, id) (the saver's primary key; a file without it may repeat a row)."""
        if self.keys_folded:
            return False
        for _, name, unique, _, partial in self.conn.execute("PRAGMA index_list(checkpoints)"):
            quoted = '"' + name.replace('"', '""') + '"'
            if unique and not partial and [r[2] for r in self.conn.execute(f"PRAGMA index_info({quoted})")] == [
                    "thread_id", "checkpoint_ns", "checkpoint_id"]:
                return True
        return False

    def _older_by_ts(self, rowid: int, bound: Any) -> bool:
        """Whether a checkpoint whose id holds no UUIDv6 time is older than ``bound`` by its
        ``ts`` (clock.checkpoint_time); one without a ``ts`` (undatable) is never in flight."""
        from symfonic_cli.clock import ts_time

        found = self.conn.execute("SELECT type, length(checkpoint) FROM checkpoints WHERE rowid = ?", (rowid,)).fetchone()
        when = ts_time(self._blob_head(rowid, found[0], found[1])[0]) if found is not None else None
        return when is None or bound is None or when < bound

    def _python_shape(self, envelope_key: str, rowid: int, older_than: str | None, bound: Any) -> EnvelopeShape | None:
        from symfonic_cli.model.envelope import ABSENT, EnvelopeShape, row_from_metadata

        sql = (
            f"SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.metadata, {_OLDER_BY_ID},"
            " c.checkpoint_ns = '' AND c.checkpoint_id = (SELECT max(m.checkpoint_id) FROM checkpoints AS m"
            f"  WHERE {self._key_is('m.thread_id', 'c.thread_id')} AND m.checkpoint_ns = '')"
            " FROM (SELECT *, checkpoint_id AS cid FROM checkpoints WHERE rowid = :rid) AS c"
        )
        found = self.conn.execute(sql, {"rid": rowid, "older": older_than}).fetchone()
        if found is None:  # deleted by a writer since the pass
            return None
        tid, ns, cid, meta, older, latest = found
        row = row_from_metadata(str(tid), ns, cid, meta, envelope_key)
        return EnvelopeShape(
            "absent" if row.envelope is ABSENT else "object",
            older=bool(older) if older is not None else self._older_by_ts(rowid, bound),
            checkpoints=1, latest=int(bool(latest)), thread_id=str(tid),
            metadata={} if row.envelope is ABSENT else {envelope_key: row.envelope},
            anomalies=row.anomalies, error=row.error,
        )

    @_translate_iter
    def iter_envelopes(self, envelope_key: str, *, thread: str | None = None) -> Iterator[EnvelopeRow]:
        from symfonic_cli.model.envelope import row_from_metadata

        # One thread (or one at a time): each row's metadata decoded as SqliteSaver decodes it.
        where = f"WHERE {self._key_is(value=':thread')}" if thread is not None else ""
        sql = (
            "SELECT thread_id, checkpoint_ns, checkpoint_id, metadata FROM checkpoints "
            f"{where} ORDER BY thread_id COLLATE BINARY, checkpoint_id DESC, checkpoint_ns"
        )
        for tid, ns, cid, meta in self.conn.execute(sql, {"thread": thread}):
            yield row_from_metadata(str(tid), ns, cid, meta, envelope_key)

    @_translate_errors
    def envelope_key_candidates(self, envelope_key: str, *, limit: int = 5) -> list[tuple[str, int]]:
        if self._take_pass("_pass_candidates") == 0:  # compat's pass found no row naming format_version
            return []
        sql = (
            "SELECT j.key, count(*) FROM (SELECT CAST(metadata AS TEXT) AS m FROM checkpoints"
            "  WHERE json_valid(CAST(metadata AS TEXT)) LIMIT -1) AS c, json_each(c.m) AS j"
            " WHERE j.type = 'object' AND j.key != ?"
            " AND json_type(j.value, '$.format_version') IS NOT NULL"
            " AND json_type(j.value, '$.writer_line') IS NOT NULL"
            " GROUP BY j.key ORDER BY count(*) DESC, j.key LIMIT ?"
        )
        return [(str(k), n) for k, n in self.conn.execute(sql, (envelope_key, limit))]



_NO_ENVELOPE = (None, None, None, None, 0, None, None)


def _unpacked(packed: str | None) -> tuple:
    """A group's key (see envelope_shapes) as (kind, the three field reads, older, prid, orid)."""
    return _NO_ENVELOPE if packed is None or packed == "o" else tuple(json.loads(packed))


def _shape_fields(row: tuple) -> tuple[str, dict, str | None]:
    """A grouped row's kind, EnvelopeShape fields and package_version (a string, else None)."""
    from symfonic_cli.model.envelope import ABSENT

    kind = _KIND.get(row[0], "absent")
    shape: dict = {}
    release = None
    if kind == "object":
        # json_array keeps json_extract's result as JSON (its subtype); text where that is lost
        *values, release = row[1] if isinstance(row[1], list) else json.loads(row[1])
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


# Envelope fields whose repetition inside the metadata sends the row to Python (see _envelope).
_READ_FIELDS = ("format_version", "writer_line", "safe_boundary", "finalized", "boundary_sequence",
                "boundary_id", "package_version")


def _envelope(raw: str) -> str:
    """SQL: the envelope's JSON text cut out of the metadata ``raw`` (NULL when the key is absent;
    x'01' then when the text names a format_version: another key may hold an envelope), or the
    BLOB x'00' for rows whose metadata SQLite's JSON functions could read differently from
    the saver's ``json.loads`` (these are decoded in Python, exactly as the saver does):

    - not valid JSON to SQLite: NaN, Infinity, nesting deeper than SQLite reads, other encodings;
    - not a BLOB or TEXT (a number sorts before every text: ``raw < ''``), or holding a NUL byte (Python detects UTF-16/32 by them; length() of
      text stops at a NUL, so the text's length then differs from the bytes');
    - longer than 20,000 bytes (it may hold an integer beyond metadata_json.MAX_INT_DIGITS);
    - any backslash escape (an escaped key is the same key to Python), any multi-byte UTF-8
      sequence (lone surrogates among them: SQLite counts fewer characters than bytes);
    - the envelope key written twice: SQLite reads the FIRST of duplicate keys, Python the LAST
      (a field the report reads written twice inside the envelope: ``_fields_repeated``, on the
      envelope's shorter text, sends its row to Python too).
    One CASE, each test made only when the ones before it passed: a row without the key's quoted
    name is valid JSON without an envelope, and the envelope is not looked for. Numbers need no test: json_extract of several paths returns each value's text
    verbatim, and Python parses it. Not caught: bytes that are not UTF-8 inside a JSON string
    where SQLite's character count still equals the byte count (stray continuation bytes); a GLOB
    over every character would find them but costs several times the whole report.
    """
    m = f"CAST({raw} AS TEXT)"
    # No envelope, but perhaps one under another key (envelope_key_candidates): the BLOB x'01'.
    _other = f"CASE WHEN instr({m}, 'format_version') > 0 THEN x'01' END"
    return (
        f"CASE WHEN {raw} IS NULL THEN NULL"
        f" WHEN {raw} < '' OR length(CAST({raw} AS BLOB)) > 20000"
        f" OR length({m}) != length(CAST({raw} AS BLOB)) OR instr({m}, '\\') > 0 OR NOT json_valid({m}) THEN x'00'"
        f" WHEN instr({m}, :q0) = 0 THEN {_other}"
        f" WHEN {_repeated(m, 0)} THEN x'00'"
        f" ELSE coalesce({m} -> :path, {_other}) END"
    )


def _repeated(text: str, i: int) -> str:
    """SQL: the quoted name ``:q{i}`` stands twice or more in ``text``."""
    return f"instr(substr({text}, instr({text}, :q{i}) + 1), :q{i}) > 0"


def _fields_repeated(env: str) -> str:
    """SQL: a field the report reads stands twice in the envelope's own text (``env``, as -> cut
    it out of metadata whose key stands once): SQLite would read the first, Python the last."""
    return " OR ".join(_repeated(env, i) for i in range(1, len(_READ_FIELDS) + 1))


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
