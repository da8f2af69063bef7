"""MongoDB stores: the compat report's reads: envelope metadata only, never a checkpoint blob."""

from __future__ import annotations

from typing import Any

from symfonic_cli.codec.metadata_json import MetadataError
from symfonic_cli.errors import StoreError
from symfonic_cli.stores._common import PLACEHOLDER_OF_KIND, VALUE_GROUPED_FIELDS
from symfonic_cli.stores.mongodb._common import (
    ORDERED_ID_PCRE,
    MongoSection,
    _decode_stored,
    _driver_errors,
    _driver_errors_iter,
    _key_is,
    _key_field,
    _string_literal,
)

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from symfonic_cli.model.envelope import EnvelopeRow, EnvelopeShape


class MongoCompat(MongoSection):
    """The compat report's reads: envelope metadata only, never a checkpoint blob."""

    # -- compat (protocol docstrings in stores/protocol.py): metadata only, grouped on the server

    @_driver_errors_iter
    def envelope_shapes(self, envelope_key: str, *, older_than: str | None = None) -> Iterator[EnvelopeShape]:
        from symfonic_cli.clock import bound_time
        from symfonic_cli.model.envelope import EnvelopeShape

        bound = bound_time(older_than) if older_than is not None else None
        env: dict[str, Any] = {"$getField": {"field": {"$literal": _string_literal(envelope_key, "envelope key")}, "input": "$metadata"}}
        # Metadata that is not a document holds no envelope (as iter_envelopes reads it): missing.
        env = {"$cond": [{"$eq": [{"$type": "$metadata"}, "object"]}, env, "$$REMOVE"]}
        is_obj = {"$eq": [{"$type": "$env"}, "object"]}
        project: dict[str, Any] = {"_id": 0, "kind": {"$type": "$env"}, "raw": {"$cond": [is_obj, None, "$env"]}, "older": 1, "latest": 1,
                                   "t": 1, "odd": 1, "pv": {"$cond": [is_obj, {"$getField": {"field": "package_version", "input": "$env"}}, None]}}
        for f in VALUE_GROUPED_FIELDS:
            project[f] = {"$cond": [is_obj, {"$getField": {"field": f, "input": "$env"}}, None]}
        bs = {"$cond": [is_obj, {"$getField": {"field": "boundary_sequence", "input": "$env"}}, None]}
        pipeline = [
            {"$setWindowFields": {
                "partitionBy": {"t": "$thread_id", "ns": "$checkpoint_ns"},
                "sortBy": {"checkpoint_id": -1},
                "output": {"_rank": {"$documentNumber": {}}},
            }},
            {"$project": {
                "_id": 0,
                "env": env,
                "t": "$thread_id",
                # A UUIDv6 (any case) by its time, which its lowercase string order is; an id in
                # another form keeps its document's _id (its group is its own), dated below by the
                # ts in its checkpoint (the instant rule, clock.py): never a string comparison.
                "older": {"$cond": [
                    {"$regexMatch": {"input": {"$toLower": "$checkpoint_id"}, "regex": ORDERED_ID_PCRE}},
                    {"$lt": [{"$toLower": "$checkpoint_id"}, older_than]}, None,
                ]} if older_than is not None else {"$literal": False},
                "odd": {"$cond": [
                    {"$regexMatch": {"input": {"$toLower": "$checkpoint_id"}, "regex": ORDERED_ID_PCRE}}, None, "$_id",
                ]} if older_than is not None else {"$literal": None},
                "latest": {"$cond": [{"$and": [{"$eq": ["$checkpoint_ns", ""]}, {"$eq": ["$_rank", 1]}]}, 1, 0]},
            }},
            {"$project": {**project, "bs": bs}},
            {"$project": {
                **{k: 1 for k in project if k != "_id"}, "_id": 0,
                "bs_type": {"$cond": [{"$isArray": "$bs"}, {"$arrayElemAt": ["$bs", 0]}, {"$type": "$bs"}]},
                "bs_bin": {"$cond": [{"$isArray": "$bs"}, {"$arrayElemAt": ["$bs", 1]}, None]},
            }},
            {"$group": {
                "_id": {
                    "t": "$t", "kind": "$kind", "raw": "$raw", "older": "$older", "odd": "$odd", "pv": "$pv", "bs_type": "$bs_type",
                    "bs_size": {"$cond": [{"$eq": [{"$type": "$bs_bin"}, "binData"]}, {"$binarySize": "$bs_bin"}, None]},
                    **{f: f"${f}" for f in VALUE_GROUPED_FIELDS},
                },
                "n": {"$sum": 1}, "latest": {"$sum": "$latest"},
                "bs_min": {"$min": "$bs_bin"}, "bs_max": {"$max": "$bs_bin"},
            }},
            # A thread's groups one after another, in byte order (the simple collation).
            {"$sort": {"_id.t": 1}},
        ]
        for doc in self.checkpoints.aggregate(pipeline, allowDiskUse=True, collation=self._collation(self.checkpoints)):
            g = doc["_id"]
            older = bool(g.get("older")) if g.get("odd") is None else self._older_by_ts(g["odd"], bound)
            counts: dict[str, Any] = {"older": older, "checkpoints": int(doc["n"]), "latest": int(doc["latest"]),
                      "thread_id": g["t"] if isinstance(g.get("t"), str) else None}
            try:
                kind, fields = _envelope_kind(g.get("kind"), g.get("raw")), {}
                if kind == "object":
                    for f in VALUE_GROUPED_FIELDS:
                        fields[f] = _shape_value(g.get(f), f)
                    fields["boundary_sequence"] = _sequence_placeholder(g.get("bs_type"), doc.get("bs_min"), doc.get("bs_max"))
            except MetadataError as exc:  # as iter_envelopes reports the same checkpoints
                yield EnvelopeShape("absent", error=exc.reason, **counts)
                continue
            yield EnvelopeShape(kind, **fields, **counts, package_version=_release(g.get("pv")) if kind == "object" else None)

    def _older_by_ts(self, doc_id: Any, bound: Any) -> bool:
        """Whether a checkpoint whose id holds no UUIDv6 time is older than ``bound`` by the ``ts``
        in its checkpoint (clock.checkpoint_time); one without a ``ts`` (undatable) is never in flight."""
        from symfonic_cli.clock import ts_time
        from symfonic_cli.codec.msgpack_head import NeedMore, checkpoint_blob_head, encrypted_blob_head

        doc = self.checkpoints.find_one({"_id": doc_id}, {"_id": 0, "type": 1, "checkpoint": 1},
                                       collation=self._collation(self.checkpoints)) or {}
        ts = None
        if isinstance(doc.get("checkpoint"), bytes):
            try:
                if doc.get("type") == "msgpack+aes":
                    ts = encrypted_blob_head(doc["type"], doc["checkpoint"])[0]
                elif doc.get("type") == "msgpack":
                    ts = checkpoint_blob_head(doc["checkpoint"])[0]
            except (NeedMore, ValueError):
                ts = None
        when = ts_time(ts)
        return when is None or bound is None or when < bound

    @_driver_errors_iter
    def iter_envelopes(self, envelope_key: str, *, thread: str | None = None) -> Iterator[EnvelopeRow]:
        from symfonic_cli.model.envelope import ABSENT, EnvelopeRow

        query = {} if thread is None else _key_is(thread)
        fields = {"_id": 0, "thread_id": 1, "checkpoint_ns": 1, "checkpoint_id": 1, "metadata": 1}
        cursor = self.checkpoints.find(query, fields, collation=self._collation(self.checkpoints)).sort([("thread_id", 1), ("checkpoint_id", -1), ("checkpoint_ns", 1)])
        for doc in cursor.allow_disk_use(True):
            tid, ns, cid = (_key_field(doc, f) for f in ("thread_id", "checkpoint_ns", "checkpoint_id"))
            meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
            env, error = ABSENT, None
            if envelope_key in meta:
                try:
                    env = _envelope_value(meta[envelope_key])
                except MetadataError as exc:
                    env, error = ABSENT, exc.reason
            yield EnvelopeRow(tid, ns, cid, _lenient(meta.get("step")), _lenient(meta.get("source")), env, error=error)

    @_driver_errors
    def envelope_key_candidates(self, envelope_key: str, *, limit: int = 5) -> list[tuple[str, int]]:
        pipeline = [
            {"$project": {"_id": 0, "kv": {"$objectToArray": {"$ifNull": ["$metadata", {}]}}}},
            {"$unwind": "$kv"},
            {"$match": {
                "kv.k": {"$ne": _string_literal(envelope_key, "envelope key")},
                "kv.v.format_version": {"$exists": True}, "kv.v.writer_line": {"$exists": True},
                "kv.v": {"$type": "object"},
            }},
            {"$group": {"_id": "$kv.k", "n": {"$sum": 1}}},
            {"$sort": {"n": -1, "_id": 1}},
            {"$limit": int(limit)},
        ]
        return [(str(d["_id"]), int(d["n"])) for d in self.checkpoints.aggregate(pipeline, collation=self._collation(self.checkpoints))]



_JSON_KIND = {type(None): "null", bool: "boolean", int: "integer", float: "number", str: "string", list: "array", tuple: "array", dict: "object"}


# msgpack's first byte decides the type; each range is contiguous, so min and max in one range
# mean every value between them is of that type.
_MSGPACK_RANGES = [
    (0x00, 0x7F, "integer"), (0x80, 0x8F, "object"), (0x90, 0x9F, "array"), (0xA0, 0xBF, "string"),
    (0xC0, 0xC0, "null"), (0xC2, 0xC3, "boolean"), (0xCA, 0xCB, "number"), (0xCC, 0xD3, "integer"),
    (0xD9, 0xDB, "string"), (0xDC, 0xDD, "array"), (0xDE, 0xDF, "object"), (0xE0, 0xFF, "integer"),
]


def _json_kind(value: Any) -> str:
    return _JSON_KIND.get(type(value), "object" if isinstance(value, dict) else "string" if isinstance(value, str) else "object")


def _lenient(value: Any) -> Any:
    """step/source for display: None when they cannot be decoded (the verdict does not use them)."""
    try:
        return None if value is None else _decode_stored(value)
    except MetadataError:
        return None


# Envelope fields the store-wide report decodes (below) and iter_envelopes decodes first, in this
# order, so a value that cannot be decoded gives both the same finding.
_STRICT_FIELDS = (*VALUE_GROUPED_FIELDS, "boundary_sequence")


def _envelope_value(stored: Any) -> Any:
    """The envelope as MongoDBSaver's loads_metadata decodes it; MetadataError (no checkpoint id in
    the reason: the store-wide report groups by it) when a value it reads cannot be decoded."""
    if not isinstance(stored, dict):
        try:
            return _decode_stored(stored)
        except MetadataError as exc:
            raise MetadataError(f"envelope cannot be decoded: {exc.reason}") from None
    out = {}
    for f in sorted(stored, key=lambda k: (_STRICT_FIELDS.index(k) if k in _STRICT_FIELDS else len(_STRICT_FIELDS), k)):
        try:
            out[f] = _decode_stored(stored[f])
        except MetadataError as exc:
            if f in _STRICT_FIELDS:
                raise MetadataError(f"envelope field '{f}' cannot be decoded: {exc.reason}") from None
            out[f] = None  # a field the verdict does not read; shown as null
    return {k: out[k] for k in stored}


def _release(stored: Any) -> str | None:
    """package_version as iter_envelopes decodes it (a value that cannot be decoded is null there)."""
    try:
        value = None if stored is None else _decode_stored(stored)
    except MetadataError:
        return None
    return value if isinstance(value, str) else None


def _envelope_kind(bson_type: Any, raw: Any) -> str:
    if bson_type in (None, "missing"):
        return "absent"
    if bson_type == "object":
        return "object"
    try:
        return _json_kind(_decode_stored(raw))
    except MetadataError as exc:
        raise MetadataError(f"envelope cannot be decoded: {exc.reason}") from None


def _shape_value(stored: Any, name: str = "") -> Any:
    """A stored envelope field as the protocol's faithful value (nested containers as placeholders)."""
    from symfonic_cli.model.envelope import ABSENT

    if stored is None:
        return ABSENT
    try:
        value = _decode_stored(stored)
    except MetadataError as exc:
        raise MetadataError(f"envelope field '{name}' cannot be decoded: {exc.reason}") from None
    if isinstance(value, (list, tuple)):
        return []
    if isinstance(value, dict):
        return {}
    return value


def _sequence_placeholder(stored_type: Any, low: Any, high: Any) -> Any:
    """boundary_sequence is grouped by JSON type only: a placeholder of that type."""
    from symfonic_cli.model.envelope import ABSENT

    if stored_type in (None, "missing", "null"):
        return ABSENT
    if stored_type == "object":
        return {}
    if stored_type != "msgpack" or not isinstance(low, bytes) or not isinstance(high, bytes):
        try:
            return PLACEHOLDER_OF_KIND[_json_kind(_decode_stored([stored_type, low or b""]))]
        except MetadataError as exc:
            raise MetadataError(f"envelope field 'boundary_sequence' cannot be decoded: {exc.reason}") from None
    kinds = {next((i for i, (a, b, _) in enumerate(_MSGPACK_RANGES) if a <= v[0] <= b), None) for v in (low, high)}
    if len(kinds) == 1:
        (only,) = kinds
        if only is not None:
            return PLACEHOLDER_OF_KIND[_MSGPACK_RANGES[only][2]]
    raise StoreError("boundary_sequence values of mixed types in one stored size; symfonic cannot group them on this server")
