"""thread rewind's write, the same on every kind: LangGraph's own "copy checkpoint" (``Pregel.
bulk_update_state`` with ``as_node="__copy__"``, langgraph/pregel/main.py) done with the saver the
caller hands in, without the application's graph:

- ``saved = saver.get_tuple(config of X)``; a checkpoint older than v4 has its pending Sends moved
  into the ``__pregel_tasks`` channel (``Pregel._migrate_checkpoint``);
- ``create_checkpoint(copy_checkpoint(saved.checkpoint), None, step)``: the same channel values,
  versions and versions seen, a new id (``uuid6(clock_seq=step)``) and ``ts``;
- ``saver.put(saved.parent_config or X's config without its id, copy, metadata, {})`` with the
  metadata ``{"source": "fork", "step": step + 1, "parents": ..., counters_since_delta_snapshot}``:
  the copy has X's parent, so a DeltaChannel's ancestor walk is X's; no pending write is carried.

Only the root namespace is copied, as ``update_state`` on the thread's config does: subgraph
checkpoints stay where they are and the copy's next run starts the subgraph afresh.
"""

from __future__ import annotations

from typing import Any

from symfonic_cli.errors import NotFoundError


def saver_config(key: str, checkpoint_id: str | None) -> dict[str, Any]:
    """A root-namespace config with no other key (the savers copy config keys into metadata)."""
    return {"configurable": {"thread_id": key, "checkpoint_ns": "", "checkpoint_id": checkpoint_id}}


def copy_as_langgraph(saver: Any, key: str, target_id: str, *, reader: Any = None) -> str:
    """Put a copy of root checkpoint ``target_id`` as the thread's newest checkpoint, exactly as
    ``update_state(config_of_target, None, as_node="__copy__")`` does; the copy's id. ``reader``:
    the saver to read with when ``saver`` only writes (MongoDB's insert-only collections)."""
    from langgraph.pregel._checkpoint import copy_checkpoint, create_checkpoint

    saved = (reader or saver).get_tuple(saver_config(key, target_id))
    if saved is None or saved.checkpoint.get("id") != target_id:
        raise NotFoundError(f"thread '{key}' has no checkpoint '{target_id}' in the root namespace")
    raw = saved.checkpoint
    if raw["v"] < 4 and raw.get("pending_sends"):  # Pregel._migrate_checkpoint
        raw["channel_values"]["__pregel_tasks"] = raw.pop("pending_sends")
        raw["channel_versions"]["__pregel_tasks"] = max(raw["channel_versions"].values())
    step = saved.metadata.get("step", -1)
    copy = create_checkpoint(copy_checkpoint(raw), None, step)
    metadata: dict[str, Any] = {
        "source": "fork",
        "step": step + 1,
        "parents": saved.metadata.get("parents", {}),
        **{k: v for k, v in saved.metadata.items() if k == "counters_since_delta_snapshot"},
    }
    parent = saved.parent_config or saver_config(key, None)
    done = saver.put(parent, copy, metadata, {})
    return str(done["configurable"]["checkpoint_id"])


def moved(key: str, planned: str, now: str | None) -> str:
    """HeadMoved's message: what the thread's newest checkpoint is now and what the plan saw."""
    return (f"thread '{key}' was written after the plan (its newest checkpoint is {now or 'gone'}, "
            f"the plan saw {planned}); nothing written")


def rewind_serializer(encrypted: bool) -> Any:
    """The serializer the application writes with: LangGraph's EncryptedSerializer with this run's
    key when the target checkpoint is stored encrypted (no key: StoreError, nothing written), else
    the plain JsonPlusSerializer every saver has by default."""
    from symfonic_cli.codec import cipher

    if encrypted:
        serde = cipher.serializer()
        if serde is None:
            from symfonic_cli.errors import StoreError

            raise StoreError(f"the checkpoint is encrypted ({cipher.NAME}); {cipher.KEY_HINT}; nothing written")
        return serde
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    return JsonPlusSerializer()
