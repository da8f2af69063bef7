"""Times LangGraph encodes in checkpoint ids (UUIDv6): activity without decoding a blob."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

_UUID_EPOCH = datetime(1582, 10, 15, tzinfo=timezone.utc)


def checkpoint_id_time(checkpoint_id: str | None) -> datetime | None:
    """The creation time LangGraph encodes in a checkpoint id (a UUIDv6), or None.

    Lets listings show activity without decoding a single checkpoint blob.
    """
    # Parsed by hand: this runs twice per listed thread, and uuid.UUID() is slow.
    if not isinstance(checkpoint_id, str) or len(checkpoint_id) != 36 or checkpoint_id[14] != "6":
        return None
    try:
        # time_high (32 bits), time_mid (16), time_low (12): their hex digits in a row.
        ticks = int(checkpoint_id[0:8] + checkpoint_id[9:13] + checkpoint_id[15:18], 16)
    except ValueError:
        return None
    return _UUID_EPOCH + timedelta(microseconds=ticks // 10)


def iso_utc(dt: datetime | None) -> str | None:
    """The one form every command prints a time in, text and JSON alike: ISO 8601 in UTC with
    ``Z`` (``2026-12-01T08:24:52.123456Z``). A time without an offset is taken as UTC."""
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    elif dt.utcoffset():
        try:
            dt = dt.astimezone(timezone.utc)
        except OverflowError:  # within hours of year 1 or 9999: keep its own offset
            return dt.isoformat()
    return dt.replace(tzinfo=None).isoformat() + "Z"
