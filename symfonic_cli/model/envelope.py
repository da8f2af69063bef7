"""What the stores hand back for ``symfonic compat``: envelope shapes, read from metadata only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class _Absent:
    """A key that is not there (distinct from a JSON null)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self):
        return (_Absent, ())


ABSENT: Any = _Absent()

# JSON type names of the value under the envelope key (EnvelopeShape.kind).
ENVELOPE_KINDS = ("absent", "null", "boolean", "integer", "number", "string", "array", "object")


@dataclass(slots=True)  # not frozen: a store hands back one a thread, and a frozen one costs 3x to make
class EnvelopeShape:
    """One group of checkpoints whose envelopes look alike in everything that decides a verdict.

    ``kind`` is the JSON type of ``metadata[envelope_key]`` (one of ENVELOPE_KINDS; "absent" when
    the key is missing or the metadata is empty; "integer" is a JSON number without fraction or
    exponent, "number" any other). The other fields are set only when kind == "object", each the
    value of that key inside the envelope, as a faithful Python JSON value: ``True``/``False``
    for JSON booleans (never 1/0), ``int`` for integers, ``float`` for other numbers, ``str``,
    ``None`` for JSON null, ``[]``/``{}`` as a placeholder for a nested array/object (its content
    does not matter), and ``ABSENT`` when the key is not in the envelope (for format_version,
    writer_line and finalized a backend may return None instead: they decode alike; never for
    safe_boundary, where a null is a finding and absence is not).

    Grouping: by (JSON type, value) of format_version, writer_line, safe_boundary and finalized;
    by JSON type only for boundary_sequence (return any value of that type, e.g. 0 or "");
    by ``older``; by ``package_version``; and by ``thread_id``, every group of one thread
    delivered consecutively (a thread's groups are never interleaved with another's), so that
    callers count threads without holding a set of them. A backend may return several rows with
    equal fields (callers add them up), and rows with ``thread_id`` None that only carry
    ``latest`` counts (``checkpoints`` 0).
    """

    kind: str
    format_version: Any = ABSENT
    writer_line: Any = ABSENT
    safe_boundary: Any = ABSENT
    finalized: Any = ABSENT
    boundary_sequence: Any = ABSENT
    older: bool = False  # checkpoint_id < older_than (always False when older_than is None)
    # The envelope's package_version (the release that wrote it) when it is a JSON string, else
    # None (absent, another type, no envelope, not an object): as decode_envelope reads it.
    package_version: str | None = None
    thread_id: str | None = None  # the thread of the group's checkpoints
    checkpoints: int = 0  # checkpoints in this group, every namespace
    latest: int = 0  # of them, how many are their thread's latest root-namespace ("") checkpoint
    # Set by a backend that decoded the group's metadata itself (rows its database functions
    # would read differently from the saver, see row_from_metadata): classified as they are.
    metadata: Any = None
    anomalies: tuple[str, ...] = ()
    error: str | None = None  # metadata the saver cannot decode (a finding, status corrupt)


@dataclass(frozen=True)
class EnvelopeRow:
    """One checkpoint's envelope and the metadata ``compat show`` prints; never a blob."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    step: Any  # metadata["step"] as stored (None when absent)
    source: Any  # metadata["source"] as stored (None when absent)
    envelope: Any  # metadata[envelope_key] fully decoded (dict, list, scalar, None), ABSENT if missing
    anomalies: tuple[str, ...] = ()  # found while decoding (duplicate keys)
    error: str | None = None  # metadata the saver cannot decode (a finding, status corrupt)


def row_from_metadata(thread_id: str, checkpoint_ns: str, checkpoint_id: str, raw: Any, key: str) -> EnvelopeRow:
    """A row from the stored metadata text, decoded as ``SqliteSaver`` decodes it (Python json)."""
    from symfonic_cli.codec.metadata_json import (
        MetadataError,
        duplicates_anomaly,
        envelope_duplicates,
        loads,
    )

    try:
        meta = {} if raw is None else loads(raw, track_duplicates=True)
    except MetadataError as exc:
        return EnvelopeRow(thread_id, checkpoint_ns, checkpoint_id, None, None, ABSENT, error=exc.reason)
    if not isinstance(meta, dict):
        meta = {}  # a JSON scalar or array holds no envelope: legacy
    dups = envelope_duplicates(meta, key)
    return EnvelopeRow(
        thread_id, checkpoint_ns, checkpoint_id, meta.get("step"), meta.get("source"),
        meta[key] if key in meta else ABSENT,
        anomalies=(duplicates_anomaly(dups),) if dups else (),
    )
