"""``transcript show`` on a 1,000-turn thread whose ``messages`` is a DeltaChannel
(snapshot_frequency=100), side by side with the same conversation stored plainly (add_messages).

Both threads are written once by real graphs into SQLite files under benchmarks/out/ (reused
when present). Each round runs both commands as whole processes, in turn (``run.side_by_side``);
medians of wall and CPU time, peak RSS, and the ratio delta / plain are printed. Target: 2x.

Run: ``python benchmarks/bench_delta.py [--turns 1000] [--reps 5]``
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT.parent))

from benchmarks import run  # noqa: E402

KEY = "bench:_:delta"


def _graph(delta: bool, checkpointer):
    from typing import Annotated

    from langchain_core.messages import AIMessage
    from langgraph.channels.delta import DeltaChannel
    from langgraph.graph import START, StateGraph
    from langgraph.graph.message import _messages_delta_reducer, add_messages
    from typing_extensions import TypedDict

    channel = DeltaChannel(_messages_delta_reducer, snapshot_frequency=100) if delta else add_messages
    State = TypedDict("State", {"messages": Annotated[list, channel]})

    def model(state):
        last = state["messages"][-1]
        return {"messages": [AIMessage(content=f"answer to: {last.content}", id=f"ai-{len(state['messages'])}")]}

    b = StateGraph(State)
    b.add_node("model", model)
    b.add_edge(START, "model")
    return b.compile(checkpointer=checkpointer)


def _store(delta: bool, turns: int) -> Path:
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = ROOT / "out" / f"delta-{'delta' if delta else 'plain'}-{turns}.db"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    conn = sqlite3.connect(tmp, check_same_thread=False)
    graph = _graph(delta, SqliteSaver(conn))
    config = {"configurable": {"thread_id": KEY}}
    for i in range(turns):
        graph.invoke({"messages": [HumanMessage(content=f"question number {i} " + "words " * 20, id=f"u-{i}")]}, config)
    conn.close()
    tmp.rename(path)
    return path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    plain, delta = _store(False, args.turns), _store(True, args.turns)
    cmds = [run.symfonic("transcript", "show", "-s", str(p), "-t", KEY, "-f", "json") for p in (plain, delta)]
    a, b = run.side_by_side(cmds, args.reps)
    import json

    def rows(out: str) -> list:  # the two threads were written at different times: compare all but the times
        return [{k: v for k, v in r.items() if k != "timestamp"} for r in json.loads(out)]

    if rows(a.out) != rows(b.out) or not all(r["timestamp"] for r in json.loads(b.out)):
        print("the two transcripts differ", file=sys.stderr)
        return 1
    print(f"transcript show, {args.turns} turns ({a.out.count(chr(10)) - 1} rows), medians of {args.reps}:")
    print(f"  plain (add_messages)            wall {a.median:.3f} s  cpu {a.cpu_median:.3f} s  rss {a.rss_mb:.0f} MB")
    print(f"  delta (DeltaChannel, freq 100)  wall {b.median:.3f} s  cpu {b.cpu_median:.3f} s  rss {b.rss_mb:.0f} MB")
    ratio = b.median / a.median
    print(f"  ratio delta / plain: wall {ratio:.2f}x, cpu {b.cpu_median / a.cpu_median:.2f}x (target <= 2x): "
          f"{'ok' if ratio <= 2 else 'OVER'}")
    return 0 if ratio <= 2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
