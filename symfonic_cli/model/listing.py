"""What every backend returns for listings: a thread summary and the store's info, as tuples.

Nothing here imports ``typing``: a quick listing loads this module and pays for no more than it uses.
"""

from __future__ import annotations

from collections import namedtuple

# One per listed thread: key, checkpoint count, the min and max checkpoint_id over every namespace
# (None when the thread has none); ``odd``: some id is not in the form whose string order is time
# order (clock.is_ordered_id), so min and max say nothing of time. ``first_at``/``last_at``: the
# first and last activity as instants, and ``undatable``: a checkpoint carries no time, both set
# by stores/activity.py (the backends leave them at their defaults).
ThreadSummary = namedtuple(
    "ThreadSummary", "key checkpoints first_checkpoint_id last_checkpoint_id odd first_at last_at undatable",
    defaults=(False, None, None, False),
)


# ``store info``: kind, location (masked), the three counts, and backend-specific printable details.
StoreInfo = namedtuple("StoreInfo", "kind location threads checkpoints writes details")


