"""What every backend returns for listings, and the helpers they share.

The protocol each backend implements is ``stores/protocol.py``. The types each command reads
sit beside it: ``checkpoint_rows.py`` (transcripts), ``envelope_rows.py`` (compat),
``erase_rows.py`` (erase), ``thread_copy.py`` (migrate). Nothing here imports ``typing``: a
quick listing loads this module and should pay for no more than it uses.
"""

from __future__ import annotations

from collections import namedtuple
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


# One per listed thread: key, checkpoint count, and the min and max checkpoint_id over every
# namespace (None when the thread has none). Activity times are read from those ids (UUIDv6).
ThreadSummary = namedtuple("ThreadSummary", "key checkpoints first_checkpoint_id last_checkpoint_id")


# ``store info``: kind, location (masked), the three counts, and backend-specific printable details.
StoreInfo = namedtuple("StoreInfo", "kind location threads checkpoints writes details")


class SupportsWith:
    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()  # type: ignore[attr-defined]
