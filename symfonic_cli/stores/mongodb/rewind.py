"""MongoDB stores: thread rewind's write (stores/_rewind.py), through MongoDBSaver's own put."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from symfonic_cli.errors import HeadMoved, NotFoundError, StoreError
from symfonic_cli.stores.mongodb._common import _driver_errors, _field, _key_is
from symfonic_cli.stores.mongodb.copy import MongoCopy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.run_state import LeanCheckpoint


class MongoRewind(MongoCopy):
    """thread rewind (see RewindProtocol in stores/protocol_changes.py): migrate's insert-only
    saver (MongoCopy._saver) writes the copy."""

    @_driver_errors
    def rewind_target(self, key: str, checkpoint_id: str) -> LeanCheckpoint | None:
        from symfonic_cli.model.run_state import lean_from_blob

        doc = self.checkpoints.find_one({**_key_is(key), "checkpoint_ns": "", "checkpoint_id": checkpoint_id},
                                        {"_id": 0, "type": 1, "checkpoint": 1, "metadata": 1}, collation=self._collation(self.checkpoints))
        if doc is None:
            return None
        meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        meta = {k: v for k, v in meta.items() if k in ("step", "source") and isinstance(v, (int, str))}
        return lean_from_blob("", checkpoint_id, doc.get("type"), _field(doc, "checkpoint", bytes, checkpoint_id), meta)

    @_driver_errors
    def rewind_thread(self, key: str, target_id: str, head_id: str, *,
                      before_commit: Callable[[], None] | None = None) -> str:
        from langgraph.checkpoint.base import BaseCheckpointSaver
        from langgraph.checkpoint.mongodb import MongoDBSaver

        from symfonic_cli.codec.cipher import is_encrypted
        from symfonic_cli.stores._rewind import copy_as_langgraph, moved, rewind_serializer

        if not self.writable:
            raise StoreError(f"{self.location.display} was opened read-only")
        exact = self._collation(self.checkpoints)

        def work(session: Any) -> str:
            head = list(self.checkpoints.find({**_key_is(key), "checkpoint_ns": ""}, {"checkpoint_id": 1, "_id": 0},
                                              session=session, collation=exact).sort("checkpoint_id", -1).limit(1))
            now = head[0].get("checkpoint_id") if head else None
            if now != head_id:
                raise HeadMoved(moved(key, head_id, now if isinstance(now, str) else None))
            target = self.checkpoints.find_one({**_key_is(key), "checkpoint_ns": "", "checkpoint_id": target_id},
                                               {"type": 1, "_id": 0}, session=session, collation=exact)
            if target is None:
                raise NotFoundError(f"thread '{key}' has no checkpoint '{target_id}' in the root namespace")
            serde = rewind_serializer(is_encrypted(target.get("type")))
            reader = MongoDBSaver.__new__(MongoDBSaver)  # the saver's own reading code, on our collections
            BaseCheckpointSaver.__init__(reader)
            reader.client, reader.db = self.client, self.db
            reader.checkpoint_collection, reader.writes_collection = self.checkpoints, self.writes
            reader.serde = serde
            writer = self._saver(session)
            writer.serde = serde
            return copy_as_langgraph(writer, key, target_id, reader=reader)

        if not self._supports_transactions():  # best effort, documented: checked, then one insert
            new_id = work(None)
            if before_commit is not None:
                before_commit()
            return new_id
        return self._transaction(work, before_commit=before_commit)
