"""The names LangGraph gives its control channels and writes, which node a channel triggers,
and the four run states: what the status listing needs without the task machinery of
``nexttasks``.
(Quick commands load this module: no typing, no dataclasses.)"""

from __future__ import annotations

from symfonic_cli.vocabulary import STATUSES  # noqa: F401 - the four run states, worded once

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PULL = "__pregel_pull"
PUSH = "__pregel_push"
TASKS = "__pregel_tasks"
START = "__start__"
INTERRUPT = "__interrupt__"
ERROR = "__error__"
RESUME = "__resume__"
ERROR_SOURCE_NODE = "__error_source_node__"
NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"
CONTROL_WRITES = frozenset((ERROR, ERROR_SOURCE_NODE, INTERRUPT, RESUME))
BRANCH_PREFIX = "branch:to:"
JOIN_PREFIX = "join:"
NS_SEP = "|"


def newer(version: Any, seen: Any) -> bool:
    # Versions are ints (in-memory saver) or zero-padded strings (the database savers): each
    # store compares them as LangGraph does, within their own type.
    if seen is None:
        return version is not None
    try:
        return version > seen
    except TypeError:
        return str(version) > str(seen)


def trigger_node(chan: str) -> str | None:
    """The node a channel triggers (``__start__``, ``branch:to:X``, ``join:A+B:X``), else None."""
    if chan == START:
        return START
    if chan.startswith(BRANCH_PREFIX):
        return chan[len(BRANCH_PREFIX):]
    if chan.startswith(JOIN_PREFIX) and chan.count(":") >= 2:
        return chan.rsplit(":", 1)[1]
    return None
