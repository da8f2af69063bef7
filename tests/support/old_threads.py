"""Threads written as if long ago: LangGraph's own checkpoint clock moved back.

LangGraph stamps each checkpoint with ``ts`` (``datetime.now``) and a UUIDv6 id made from
``time.time_ns()``; both are read through the modules below, which the context manager points at
a clock ``offset`` behind (its monotonic guard reset, else ids would stay after the newest one
made). The graph and saver are the real ones; only the clock they read is moved.
"""

from __future__ import annotations

import time as _time
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from unittest import mock

_TS_MODULES = ("langgraph.checkpoint.base", "langgraph.pregel._checkpoint")


@contextmanager
def clock_moved_back(offset: timedelta):
    import importlib

    import langgraph.checkpoint.base.id as ids

    shift_ns = int(offset.total_seconds() * 1_000_000_000)

    class _Time:
        def __getattr__(self, name):
            return getattr(_time, name)

        @staticmethod
        def time_ns() -> int:
            return _time.time_ns() - shift_ns

    class _Datetime(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime.now(tz) - offset

    patches = [mock.patch.object(ids, "time", _Time()), mock.patch.object(ids, "_last_v6_timestamp", None)]
    for name in _TS_MODULES:
        module = importlib.import_module(name)
        if hasattr(module, "datetime"):
            patches.append(mock.patch.object(module, "datetime", _Datetime))
    for p in patches:
        p.start()
    try:
        yield
    finally:
        for p in reversed(patches):
            p.stop()
        ids._last_v6_timestamp = None  # the next id comes from the real clock again


def write_aged(backend, url: str, ages: dict[str, timedelta], turns: int = 2) -> None:
    """Each key's conversation (``turns`` turns of the real agent graph) written ``age`` ago."""
    from langchain_core.messages import HumanMessage

    from tests.support.scenarios import agent_graph

    with backend.saver(url) as saver:
        graph = agent_graph().compile(checkpointer=saver)
        for key, age in ages.items():
            with clock_moved_back(age):
                for i in range(turns):
                    graph.invoke({"messages": [HumanMessage(content=f"turn {i} of {key}")]}, {"configurable": {"thread_id": key}})


def now() -> datetime:
    return datetime.now(timezone.utc)
