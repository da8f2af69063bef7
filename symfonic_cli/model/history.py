"""What the stores hand back for ``thread history``: checkpoint metadata facts and write channels.

Neither carries a decoded value: history is built from ids, metadata and channel names, plus
the message counts and ids that ``symfonic_cli.transcript.timestamps`` already reads cheaply.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class CheckpointFacts(NamedTuple):
    """A checkpoint's metadata as history shows it.

    - ``source``: ``metadata["source"]`` when it is a string, else None.
    - ``step``: ``metadata["step"]`` when it is an int, else None.
    - ``writes``: ``metadata["writes"]`` (LangGraph before 0.3 kept ``{node: values}`` there)
      as stored, decoded; None when absent. Newer LangGraph keeps writes only in the writes table.
    """

    checkpoint_ns: str
    checkpoint_id: str
    source: str | None
    step: int | None
    writes: Any = None


class WriteChannel(NamedTuple):
    """One stored write without its value: which task, on which checkpoint, wrote which channel.

    ``checkpoint_id`` is the checkpoint the task ran ON. ``task_path`` is "" when the store has
    no task_path column (older savers).
    """

    checkpoint_ns: str
    checkpoint_id: str
    task_id: str
    task_path: str
    idx: int
    channel: str
