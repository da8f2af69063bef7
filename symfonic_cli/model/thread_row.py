"""One row of ``threads list`` with run state (quick commands load this module: no dataclasses)."""

from __future__ import annotations

from collections import namedtuple

# One per listed thread: ThreadSummary's fields, the status (None: no root checkpoint), size or None;
# first_at/last_at/undatable: activity by instant (clock.py), set by threadstate/listing.py.
ThreadRunState = namedtuple(
    "ThreadRunState", "key checkpoints first_checkpoint_id last_checkpoint_id status size_bytes first_at last_at undatable",
    defaults=(None, None, False),
)
