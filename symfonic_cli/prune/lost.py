"""What a prune removes for good: the messages held only by the checkpoints it deletes.

symfonic-core's compaction removes older messages from the state; the checkpoints written before
still hold them. Pruning those checkpoints deletes the last copies: the plan counts them per
thread, the receipt records the count (never the content). Each checkpoint of the thread is read
once, as a prefix of a shared list where it is one (the store's ``message_views``: stores/messages.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

from symfonic_cli.stores.protocol import Store

if TYPE_CHECKING:
    from symfonic_cli.stores.messages import View
    from symfonic_cli.model.prune import PruneDecision


def quick_reader(store: Store) -> Callable[[str, Iterator[Any]], list[View] | None]:
    """What a store's plan read makes of a thread's message states as it reads them (``prune_plans(reader=...)``):
    the quick pass's views, nothing decoded; None where the quick pass cannot be made from them (the count reads again)."""
    def read(key: str, states: Iterator[Any]) -> list[View] | None:
        try:
            return list(store.message_views(key, decode=False, states=states))
        except Exception:  # a DeltaChannel, an unreadable blob: the count reads the thread itself, as before
            return None

    return read


def messages_only_in_deleted(store: Store, key: str, *, keep: int = 1, newer_than: datetime | None = None,
                             keep_branches: bool = False, decision: PruneDecision | None = None,
                             views: list[View] | None = None) -> int:
    """How many message versions no checkpoint the prune keeps holds, while one it deletes does.
    ``decision``: the prune's decision for ``key`` when the caller has it (the plan's), else read;
    ``views``: the quick pass's views when the plan's read made them (``quick_reader``), else read."""
    from symfonic_cli.stores.messages import Delta

    d = decision if decision is not None else store.prune_decision(key, keep=keep, newer_than=newer_than, keep_branches=keep_branches)
    if d.skipped or not d.checkpoints:
        return 0
    deleted_ids = {ns: set(ids) for ns, ids in d.delete.items()}

    def longest(views: Iterator[View]) -> tuple[dict[int, tuple[Any, int]], dict[int, tuple[Any, int]]]:
        # Per shared list, the longest prefix a kept (a deleted) checkpoint holds.
        kept: dict[int, tuple[Any, int]] = {}
        gone: dict[int, tuple[Any, int]] = {}
        drop, no_ids = d.drop, ()
        for v in views:  # once per checkpoint: plain lookups
            side = gone if v.ns in drop or v.cid in deleted_ids.get(v.ns, no_ids) else kept
            anchor = v.anchor
            had = side.get(id(anchor))
            if had is None or had[1] < v.length:
                side[id(anchor)] = (anchor, v.length)
        return kept, gone

    def count(kept: dict[int, tuple[Any, int]], gone: dict[int, tuple[Any, int]]) -> int:
        keep_keys = {k for a, n in kept.values() for k in a.keys[:n]}
        return len({k for a, n in gone.values() for k in a.keys[:n]} - keep_keys)

    try:
        # A quick pass first, nothing decoded: when every list a deleted checkpoint holds is a
        # prefix of one a kept checkpoint holds (an append-only thread), nothing is lost.
        kept, gone = longest(iter(views) if views is not None else store.message_views(key, decode=False))
        if all(n <= kept.get(i, (None, 0))[1] for i, (_, n) in gone.items()):
            return 0
        if all(len(a.keys) >= n for side in (kept, gone) for a, n in side.values()):
            return count(kept, gone)  # every list was decoded anyway (not plain msgpack: encrypted, JSON)
        return count(*longest(store.message_views(key)))
    except Delta:
        return count(*longest(store.delta_message_views(key)))
