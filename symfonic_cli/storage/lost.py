"""What a prune removes for good: the messages held only by the checkpoints it deletes.

symfonic-core's compaction removes older messages from the state; the checkpoints written before
still hold them. Pruning those checkpoints deletes the last copies: the plan counts them per
thread, the receipt records the count (never the content). Each checkpoint of the thread is read
once (``symfonic_cli/memory/retained.py``); only a digest of each message version is kept.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from symfonic_cli.stores.protocol import Store


def _digests(messages: list[Any]) -> Iterator[bytes]:
    from symfonic_cli.memory.retained import version_key

    for m in messages:
        mid, text = version_key(m)
        yield hashlib.blake2b(f"{mid}\x00{text}".encode("utf-8", "surrogatepass"), digest_size=16).digest()


def messages_only_in_deleted(store: Store, key: str, *, keep: int = 1, newer_than: datetime | None = None) -> int:
    """How many message versions no checkpoint the prune keeps holds, while one it deletes does."""
    from symfonic_cli.memory.retained import _Delta, _delta_checkpoints, _plain_checkpoints

    d = store.prune_decision(key, keep=keep, newer_than=newer_than)
    if d.skipped or not d.checkpoints:
        return 0
    deleted_ids = {ns: set(ids) for ns, ids in d.delete.items()}

    def count(checkpoints: Iterator[Any]) -> int:
        kept: set[bytes] = set()
        gone: set[bytes] = set()
        for cp in checkpoints:
            goes = cp.ns in d.drop or cp.cid in deleted_ids.get(cp.ns, ())
            (gone if goes else kept).update(_digests(cp.messages))
        return len(gone - kept)

    try:
        return count(_plain_checkpoints(store, key))
    except _Delta:
        return count(_delta_checkpoints(store, key))
