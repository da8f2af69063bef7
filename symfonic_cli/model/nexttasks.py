"""LangGraph's next-task rules over plain data, without the application's graph.

Mirrors ``langgraph.pregel._algo.prepare_next_tasks`` / ``_triggers`` and the live view of
``Pregel.get_state`` (``_prepare_state_snapshot`` with ``read_task_statuses``) for StateGraph
graphs (LangGraph 1.x):

- a node ``X`` is triggered by its ``branch:to:X`` channel and by join channels
  ``join:A+B:X`` (``add_edge([A, B], X)``); the ``__start__`` node by ``__start__``;
- it is due when one of those channels holds a value (is in ``channel_values``) and, if the node
  ran before, the channel's version is newer than ``versions_seen[X][channel]``;
- every pending ``Send`` in ``__pregel_tasks`` is a task of its target node, listed first;
- the live view leaves out tasks that already recorded an output write at this checkpoint, and
  its interrupts are those of unfinished tasks.

Task ids are LangGraph's own (xxh3 or uuid5 over the checkpoint id, namespace, step, node and
triggers), so pending writes are matched to tasks by id, and by ``task_path`` when the store kept
it (a task whose id cannot be rebuilt, e.g. a join channel that was never written).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from symfonic_cli.model.triggers import (  # noqa: F401 - re-exported: nt.TASKS etc.
    PULL,
    PUSH,
    TASKS,
    START,
    INTERRUPT,
    ERROR,
    RESUME,
    ERROR_SOURCE_NODE,
    NULL_TASK_ID,
    CONTROL_WRITES,
    BRANCH_PREFIX,
    JOIN_PREFIX,
    NS_SEP,
    STATUSES,
    newer as _newer,
    trigger_node,
)


@dataclass
class Task:
    name: str
    path: str  # task_path as LangGraph stores it with its writes
    id: str | None
    push_index: int | None = None


@dataclass
class PendingWrite:
    task_id: str
    task_path: str | None
    channel: str
    value: Any = None  # decoded for __interrupt__ / __error__ only


@dataclass
class RunState:
    status: str
    next: list[str]
    interrupts: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)


def trigger_channels(channel_versions: Iterable[str]) -> dict[str, list[str]]:
    """Node -> its trigger channels, as far as the checkpoint names them."""
    out: dict[str, list[str]] = {}
    for chan in channel_versions:
        node = trigger_node(chan)
        if node is not None:
            out.setdefault(node, []).append(chan)
    return out


def _available(chan: str, available: Mapping[str, Any] | set[str]) -> bool:
    if chan not in available:
        return False
    if chan.startswith(JOIN_PREFIX) and isinstance(available, Mapping):
        # NamedBarrierValue: a value is the set of nodes seen; available once all have arrived.
        seen = available[chan]
        names = chan[len(JOIN_PREFIX):].rsplit(":", 1)[0].split("+")
        if isinstance(seen, (list, set, tuple, frozenset)):
            return set(map(str, seen)) >= set(names)
    return True


def task_id(checkpoint_id: str, v: int, *parts: str) -> str | None:
    """LangGraph's task id: ``_xxhash_str`` for checkpoint format v > 1, ``_uuid5_str`` before."""
    try:
        id_bytes = bytes.fromhex(checkpoint_id.replace("-", ""))
    except (ValueError, AttributeError):
        return None
    data = b"".join(p.encode() for p in parts)
    if v > 1:
        try:
            from xxhash import xxh3_128_hexdigest
        except ImportError:  # pragma: no cover - xxhash comes with langgraph
            return None
        h = xxh3_128_hexdigest(id_bytes + data)
    else:
        from hashlib import sha1

        s = sha1(id_bytes, usedforsecurity=False)
        s.update(data)
        h = s.hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _path_index(i: int) -> str:
    return f"{i:010d}"


def due_tasks(
    *,
    checkpoint_id: str,
    checkpoint_ns: str,
    step: int,
    v: int,
    channel_versions: Mapping[str, Any],
    versions_seen: Mapping[str, Mapping[str, Any]],
    available: Mapping[str, Any] | set[str],
    sends: list[str | None],
) -> list[Task]:
    """The tasks LangGraph would prepare for the step after this checkpoint (``prepare_next_tasks``).

    ``step`` is the checkpoint's metadata step + 1; ``available`` the channels holding a value
    (a mapping gives join channels' values); ``sends`` the target node of each pending Send.
    """
    tasks: list[Task] = []
    if TASKS in available:
        for idx, node in enumerate(sends):
            if not isinstance(node, str):
                continue
            ns = f"{checkpoint_ns}{NS_SEP}{node}" if checkpoint_ns else node
            tid = task_id(checkpoint_id, v, ns, str(step), node, PUSH, str(idx))
            tasks.append(Task(node, f"~{PUSH}, {_path_index(idx)}", tid, idx))
    if not channel_versions:
        return tasks
    # By name, as LangGraph orders the nodes an executing step triggers (``sorted(triggered_nodes)``);
    # the graph's own node order is not in the store.
    for node, triggers in sorted(trigger_channels(channel_versions).items()):
        seen = versions_seen.get(node)
        due = False
        for chan in triggers:
            if not _available(chan, available):
                continue
            if seen is None or _newer(channel_versions.get(chan), seen.get(chan)):
                due = True
                break
        if due:
            ns = f"{checkpoint_ns}{NS_SEP}{node}" if checkpoint_ns else node
            tid = task_id(checkpoint_id, v, ns, str(step), node, PULL, *sorted(triggers))
            tasks.append(Task(node, f"~{PULL}, {node}", tid))
    return tasks


def _owner(tasks: list[Task], w: PendingWrite) -> Task | None:
    for t in tasks:
        if t.id is not None and w.task_id == t.id:
            return t
    if w.task_path:
        for t in tasks:
            if w.task_path == t.path or (t.push_index is not None and w.task_path.startswith(t.path + ",")):
                return t
    return None


def node_of_path(task_path: str | None) -> str | None:
    """The node a stored ``task_path`` names (``~__pregel_pull, NODE``), else None."""
    prefix = f"~{PULL}, "
    if task_path and task_path.startswith(prefix):
        return task_path[len(prefix):]
    return None


def run_state(tasks: list[Task], writes: list[PendingWrite]) -> RunState:
    """Status, ``next``, interrupts and errors from the due tasks and the checkpoint's pending writes."""
    finished: set[int] = set()
    interrupts_by_task: dict[int, list[Any]] = {}
    errors: list[dict[str, Any]] = []
    for w in writes:
        if w.task_id == NULL_TASK_ID:
            continue
        owner = _owner(tasks, w)
        key = id(owner) if owner is not None else None
        if w.channel == INTERRUPT:
            if key is not None:
                values = w.value if isinstance(w.value, (list, tuple)) else [w.value]
                interrupts_by_task.setdefault(key, []).extend(values)
        elif w.channel == ERROR:
            node = owner.name if owner is not None else node_of_path(w.task_path)
            errors.append({"node": node, "error": w.value})
        elif w.channel not in CONTROL_WRITES and key is not None:
            finished.add(key)
    nxt = [t.name for t in tasks if id(t) not in finished]
    interrupts = []
    for t in tasks:
        if id(t) in finished:
            continue
        for itr in interrupts_by_task.get(id(t), []):
            iid, value = _interrupt_fields(itr)
            interrupts.append({"id": iid, "value": value, "node": t.name})
    if interrupts:
        status = "interrupted"
    elif errors:
        status = "error"
    elif nxt:
        status = "pending"
    else:
        status = "done"
    return RunState(status, nxt, interrupts, errors)


def _interrupt_fields(itr: Any) -> tuple[Any, Any]:
    if isinstance(itr, dict):  # shown from its raw fields
        return itr.get("id"), itr.get("value")
    return getattr(itr, "id", None), getattr(itr, "value", itr)


def quick_status(due: list[Task], task_flags: Mapping[str, tuple[str | None, bool, bool, bool]]) -> str:
    """Status for listings from per-task write flags ``task_id -> (task_path, interrupt, error, output)``."""
    finished, interrupted, error = set(), set(), False
    for tid, (path, has_interrupt, has_error, has_output) in task_flags.items():
        if tid == NULL_TASK_ID:
            continue
        owner = _owner(due, PendingWrite(tid, path, ""))
        if has_error:
            error = True
        if owner is None:
            continue
        if has_output:
            finished.add(id(owner))
        elif has_interrupt:
            interrupted.add(id(owner))
    if interrupted:
        return "interrupted"
    if error:
        return "error"
    if any(id(t) not in finished for t in due):
        return "pending"
    return "done"
