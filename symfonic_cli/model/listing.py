"""What every backend returns for listings: a thread summary and the store's info, as tuples.

Nothing here imports ``typing``: a quick listing loads this module and pays for no more than it uses.
"""

from __future__ import annotations

from collections import namedtuple

# One per listed thread: key, checkpoint count, and the min and max checkpoint_id over every
# namespace (None when the thread has none). Activity times are read from those ids (UUIDv6).
ThreadSummary = namedtuple("ThreadSummary", "key checkpoints first_checkpoint_id last_checkpoint_id")


# ``store info``: kind, location (masked), the three counts, and backend-specific printable details.
StoreInfo = namedtuple("StoreInfo", "kind location threads checkpoints writes details")


