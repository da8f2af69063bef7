"""What a prune removes for good: the messages held only by the checkpoints it deletes.

symfonic-core's compaction removes older messages from the state; the checkpoints written before
still hold them. Pruning those checkpoints deletes the last copies: the plan counts them per
thread, the receipt records the count (never the content). Each checkpoint of the thread is read
once, as a prefix of a shared list where it is one (``symfonic_cli/memory/views.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from symfonic_cli.stores.protocol import Store


def messages_only_in_deleted(store: Store, key: str, *, keep: int = 1, newer_than: datetime | None = None) -> int:
    """How many message versions no checkpoint the prune keeps holds, while one it deletes does."""
    from symfonic_cli.memory.views import Delta, checkpoint_views, delta_views

    d = store.prune_decision(key, keep=keep, newer_than=newer_than)
    if d.skipped or not d.checkpoints:
        return 0
    deleted_ids = {ns: set(ids) for ns, ids in d.delete.items()}

    def count(views: Iterator[Any]) -> int:
        # Per shared list, the longest prefix a kept (a deleted) checkpoint holds.
        kept: dict[int, tuple[Any, int]] = {}
        gone: dict[int, tuple[Any, int]] = {}
        for v in views:
            side = gone if v.ns in d.drop or v.cid in deleted_ids.get(v.ns, ()) else kept
            _, n = side.get(id(v.anchor), (v.anchor, 0))
            side[id(v.anchor)] = (v.anchor, max(n, v.length))
        keep_keys = {k for a, n in kept.values() for k in a.keys[:n]}
        return len({k for a, n in gone.values() for k in a.keys[:n]} - keep_keys)

    try:
        return count(checkpoint_views(store, key))
    except Delta:
        return count(delta_views(store, key))
