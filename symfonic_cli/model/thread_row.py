"""One row of ``threads list`` with run state (quick commands load this module: no dataclasses)."""

from __future__ import annotations

from collections import namedtuple

# One per listed thread: ThreadSummary's fields, the status (None: no root checkpoint), size or None;
# first_at/last_at/undatable: activity by instant (clock.py), set by threadstate/listing.py; ``odd``:
# None when the store did not test every id, False when it did and all are in the ordered form
# (it then set first_at/last_at), True when some id is not (decided checkpoint by checkpoint).
ThreadRunState = namedtuple(
    "ThreadRunState", "key checkpoints first_checkpoint_id last_checkpoint_id status size_bytes first_at last_at undatable odd",
    defaults=(None, None, False, None),
)


def told_run_state(key: str, n: int, first: object, last: object, odd: bool, status: str | None, size: int | None) -> ThreadRunState:
    """A row whose store tested every id (``odd``: some id is not in the ordered form): the times
    from the least and greatest ids when none is odd, else left to be read checkpoint by checkpoint."""
    if odd or type(first) is not str or type(last) is not str:
        return ThreadRunState(key, n, first, last, status, size, None, None, False, True)
    from symfonic_cli.clock import ordered_id_time

    return ThreadRunState(key, n, first, last, status, size, ordered_id_time(first), ordered_id_time(last), False, False)
