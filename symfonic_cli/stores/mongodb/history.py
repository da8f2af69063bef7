"""MongoDB stores: thread history and diff: checkpoint metadata and write channels, no value decoded."""

from __future__ import annotations

from collections.abc import Iterator

from symfonic_cli.errors import StoreError
from symfonic_cli.stores.mongodb._common import (
    MongoSection,
    _driver_errors,
    _driver_errors_iter,
    _field,
    _key_is,
    _key_field,
    _leaf,
    _short,
    _string_literal,
)

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.checkpoint import MessageState
    from symfonic_cli.model.history import CheckpointFacts, WriteChannel


class MongoHistory(MongoSection):
    """Thread history and diff: checkpoint metadata and write channels, no value decoded."""

    # -- history (protocol docstrings in stores/protocol.py): metadata and write channels, no value decoded

    @_driver_errors_iter
    def iter_checkpoint_facts(self, key: str) -> Iterator["CheckpointFacts"]:
        from symfonic_cli.model.history import CheckpointFacts

        fields = {"_id": 0, "checkpoint_ns": 1, "checkpoint_id": 1, "metadata.source": 1, "metadata.step": 1, "metadata.writes": 1}
        for doc in self._thread_docs(key, fields, descending=False):
            cid = _field(doc, "checkpoint_id", str, None)
            meta = found if isinstance(found := doc.get("metadata"), dict) else {}
            try:
                source, step, writes = _leaf(meta.get("source"), cid), _leaf(meta.get("step"), cid), _leaf(meta.get("writes"), cid)
            except StoreError:  # odd metadata: shown as unknown
                source = step = writes = None
            yield CheckpointFacts(
                _key_field(doc, "checkpoint_ns"), cid, source if isinstance(source, str) else None,
                step if isinstance(step, int) and not isinstance(step, bool) else None, writes,
            )

    @_driver_errors_iter
    def iter_write_channels(self, key: str) -> Iterator["WriteChannel"]:
        from symfonic_cli.model.history import WriteChannel

        fields = {"_id": 0, "checkpoint_ns": 1, "checkpoint_id": 1, "task_id": 1, "task_path": 1, "idx": 1, "channel": 1}
        for doc in self.writes.find(_key_is(key), fields, collation=self._collation(self.writes)):
            path, idx = doc.get("task_path"), doc.get("idx")
            what = f"a write document of thread '{key}'"
            if not isinstance(idx, int) or isinstance(idx, bool):
                raise StoreError(f"{what} has an unexpected shape: 'idx' is {type(idx).__name__} ({_short(idx)}), not an integer")
            yield WriteChannel(
                _key_field(doc, "checkpoint_ns", what), _key_field(doc, "checkpoint_id", what), _key_field(doc, "task_id", what),
                path if isinstance(path, str) else "", idx, doc.get("channel"),
            )

    @_driver_errors
    def checkpoint_ids(self, key: str) -> list[tuple[str, str]]:
        fields = {"_id": 0, "checkpoint_ns": 1, "checkpoint_id": 1}
        return [
            (_key_field(doc, "checkpoint_ns"), doc.get("checkpoint_id"))
            for doc in self.checkpoints.find(_key_is(key), fields, collation=self._collation(self.checkpoints))
            if isinstance(doc.get("checkpoint_id"), str)
        ]

    @_driver_errors
    def read_messages_as_stored(self, key: str, *, checkpoint_ns: str, checkpoint_id: str) -> MessageState | None:
        from symfonic_cli.model.checkpoint import MessageState

        query = {
            **_key_is(key),
            "checkpoint_ns": _string_literal(checkpoint_ns, "namespace"),
            "checkpoint_id": _string_literal(checkpoint_id, "checkpoint id"),
        }
        doc = self.checkpoints.find_one(query, {"_id": 0, "type": 1, "checkpoint": 1}, collation=self._collation(self.checkpoints))
        if doc is None:
            return None
        return MessageState(
            checkpoint_ns, checkpoint_id, None, checkpoint_id, "checkpoint",
            _field(doc, "type", str, checkpoint_id), _field(doc, "checkpoint", bytes, checkpoint_id),
        )
