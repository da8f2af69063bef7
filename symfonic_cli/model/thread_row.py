"""One row of ``threads list`` with run state (quick commands load this module: no dataclasses)."""

from __future__ import annotations

from collections import namedtuple

# One per listed thread: ThreadSummary's fields, the status (None: no root checkpoint), size or None.
ThreadRunState = namedtuple("ThreadRunState", "key checkpoints first_checkpoint_id last_checkpoint_id status size_bytes")
