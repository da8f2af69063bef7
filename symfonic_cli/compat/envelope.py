"""The compatibility envelope contract of symfonic-core's ``compat`` module, as pure functions.

Migrated writers add a provenance envelope to each checkpoint's metadata, additively, under one
reserved key; legacy writers add none. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

DEFAULT_ENVELOPE_KEY = "symfonic_envelope"
from symfonic_cli.vocabulary import ENVELOPE_KEY_ENV  # noqa: E402,F401 - named once, in vocabulary (the quick route reads it)
LEGACY_FORMAT = 0
CURRENT_FORMAT = 1  # the newest format this tool understands (--current-format N)
WRITER_LINES = ("legacy", "migrated")
ENVELOPE_FIELDS = (
    "format_version",
    "writer_line",
    "package_version",
    "safe_boundary",
    "boundary_id",
    "boundary_sequence",
    "finalized",
)

LEGACY_TO_MIGRATED = "legacy->migrated"
MIGRATED_TO_LEGACY = "migrated->legacy"
UNREADABLE = "unreadable"

# CheckpointFormatError.problem values
NOT_A_MAPPING = "not-a-mapping"
NO_FORMAT_VERSION = "no-format-version"
NEWER = "newer"
BAD_WRITER_LINE = "bad-writer-line"


class CheckpointFormatError(ValueError):
    """An envelope a migrated reader refuses to resume from. ``problem`` names which rule."""

    def __init__(self, message: str, *, problem: str, format_version: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.problem = problem
        self.format_version = format_version

    @property
    def newer(self) -> bool:
        return self.problem == NEWER


@dataclass(frozen=True)
class StateEnvelope:
    format_version: int
    writer_line: str  # "legacy" | "migrated"
    package_version: str | None = None
    safe_boundary: bool = False
    boundary_id: str | None = None
    boundary_sequence: int | None = None
    finalized: bool | None = None

    def to_metadata(self) -> dict[str, Any]:
        """The metadata form: exactly the seven keys, JSON scalars only."""
        return {f: getattr(self, f) for f in ENVELOPE_FIELDS}


@dataclass(frozen=True)
class CompatibilityReport:
    """Carries no state content, so it is safe to print beside a tenant id."""

    direction: str
    writer_line: str | None
    format_version: int | None
    readable_by_legacy: bool
    readable_by_migrated: bool
    reason: str


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def decode_envelope(
    metadata: Mapping[str, Any] | None,
    *,
    key: str = DEFAULT_ENVELOPE_KEY,
    current_format: int = CURRENT_FORMAT,
) -> StateEnvelope:
    """The envelope of a checkpoint's metadata; legacy state when there is none.

    Raises CheckpointFormatError for an envelope a migrated reader must not resume from.
    """
    if not metadata or key not in metadata:
        return StateEnvelope(format_version=LEGACY_FORMAT, writer_line="legacy")
    raw = metadata[key]
    if not isinstance(raw, Mapping):
        raise CheckpointFormatError(f"'{key}' is not a mapping; the envelope is corrupt", problem=NOT_A_MAPPING)
    version = raw.get("format_version")
    if not _is_int(version) or version < 1:
        raise CheckpointFormatError(
            f"envelope carries no usable format_version ({_short(version)})", problem=NO_FORMAT_VERSION
        )
    if version > current_format:
        raise CheckpointFormatError(
            f"envelope format_version {_short(version)} is newer than this package understands "
            f"({current_format}); refusing to resume",
            problem=NEWER,
            format_version=version,
        )
    line = raw.get("writer_line")
    if line not in WRITER_LINES:
        raise CheckpointFormatError(
            f"envelope writer_line {_short(line)} is not one of {', '.join(repr(w) for w in WRITER_LINES)}",
            problem=BAD_WRITER_LINE,
            format_version=version,
        )
    package = raw.get("package_version")
    boundary_id = raw.get("boundary_id")
    sequence = raw.get("boundary_sequence")
    finalized = raw.get("finalized")
    return StateEnvelope(
        format_version=version,
        writer_line=line,
        package_version=package if isinstance(package, str) else None,
        # symfonic reads it with bool(): "false" is True. safe_boundary_anomaly() reports that.
        safe_boundary=bool(raw.get("safe_boundary", False)),
        boundary_id=boundary_id if isinstance(boundary_id, str) else None,
        # Not an int / not a bool: read as absent, never coerced.
        boundary_sequence=sequence if _is_int(sequence) else None,
        finalized=finalized if isinstance(finalized, bool) else None,
    )


def describe_compatibility(
    metadata: Mapping[str, Any] | None,
    *,
    key: str = DEFAULT_ENVELOPE_KEY,
    current_format: int = CURRENT_FORMAT,
) -> CompatibilityReport:
    """Which way this checkpoint's state crosses the migration, and who can read it.

    A decoding error is reported (direction "unreadable"), never raised: migrated readers refuse
    it; legacy readers ignore the envelope, so they can read a corrupt one but not a newer format.
    """
    try:
        env = decode_envelope(metadata, key=key, current_format=current_format)
    except CheckpointFormatError as exc:
        raw = metadata.get(key) if metadata else None
        line = raw.get("writer_line") if isinstance(raw, Mapping) else None
        return CompatibilityReport(
            direction=UNREADABLE,
            writer_line=line if line in WRITER_LINES else None,
            format_version=exc.format_version,
            readable_by_legacy=not exc.newer,
            readable_by_migrated=False,
            reason=exc.message,
        )
    if env.writer_line == "legacy":
        return CompatibilityReport(
            direction=LEGACY_TO_MIGRATED,
            writer_line="legacy",
            format_version=env.format_version,
            readable_by_legacy=True,
            readable_by_migrated=True,
            reason="no envelope; migrated readers treat absent provenance as legacy",
        )
    return CompatibilityReport(
        direction=MIGRATED_TO_LEGACY,
        writer_line="migrated",
        format_version=env.format_version,
        readable_by_legacy=True,
        readable_by_migrated=True,
        reason=f"envelope is additive under '{key}'; every legacy field is unchanged",
    )


def boolean_anomalies(metadata: Mapping[str, Any] | None, *, key: str = DEFAULT_ENVELOPE_KEY) -> list[str]:
    """Envelope fields present with a value that is not a real bool / int, and how it is read."""
    raw = metadata.get(key) if metadata else None
    if not isinstance(raw, Mapping):
        return []
    out = []
    # A nested value is quoted by its type only: the store-wide report groups without its content.
    if "safe_boundary" in raw and not isinstance(raw["safe_boundary"], bool):
        value = raw["safe_boundary"]
        read = "True unless empty" if _is_container(value) else bool(value)
        out.append(f"safe_boundary is {_quote(value)} ({_json_type(value)}), read as {read}")
    if "finalized" in raw and raw["finalized"] is not None and not isinstance(raw["finalized"], bool):
        out.append(f"finalized is {_quote(raw['finalized'])} ({_json_type(raw['finalized'])}), read as absent")
    sequence = raw.get("boundary_sequence")
    if sequence is not None and not _is_int(sequence):
        # Only the type: store-wide counts group boundary_sequence by type, not by value.
        out.append(f"boundary_sequence is a {_json_type(sequence)}, not an integer; read as absent")
    return out


def _is_container(value: Any) -> bool:
    return isinstance(value, (Mapping, list, tuple))


def _quote(value: Any) -> str:
    if _is_container(value):
        return "{...}" if isinstance(value, Mapping) else "[...]"
    return _short(value)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    return "array" if isinstance(value, (list, tuple)) else type(value).__name__


def _short(value: Any, limit: int = 60) -> str:
    # Envelope values are untrusted and unbounded: messages quote at most ``limit`` characters.
    if _is_int(value) and value.bit_length() > 3 * limit:
        # Only the head: repr() of a long integer is slow, and refused beyond 4,300 digits.
        digits = int(value.bit_length() * 0.30103) + 1
        return f"{'-' if value < 0 else ''}an integer of about {digits:,} digits"
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # a long integer nested in a container, deep nesting
        return f"a {_json_type(value)} too large to quote"
    return text if len(text) <= limit else text[: limit - 3] + "..."
