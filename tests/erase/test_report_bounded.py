"""A sweep and a prune keep nothing per thread once the caller's Report is told (issue #35 item 2:
the rendering moved to the front end, the streaming stayed): when thread N is told, no earlier
thread's outcome is alive anywhere, so memory does not grow with the threads (a sweep of 200,000
threads holds one page of plans). Checked through the command line's own Report, on every kind."""

from __future__ import annotations

import gc
import io
import json
import weakref
from datetime import timedelta

from symfonic_cli.cli.report import TextReport
from symfonic_cli.environment import Environment
from symfonic_cli.changes.report import ThreadDone
from symfonic_cli.location import resolve_store
from tests.support.old_threads import write_aged

DAY = timedelta(days=1)
IDLE = {f"acme:_:idle-{n:02d}": (100 + n) * DAY for n in range(9)}


class Watching(TextReport):
    """The command line's Report, watching which earlier outcomes are still alive when a thread is told."""

    def __init__(self, env: Environment, fmt: str) -> None:
        super().__init__(env, fmt)
        self.seen: list[weakref.ref] = []
        self.most_alive = 0

    def thread(self, done: ThreadDone) -> None:
        alive = sum(ref() is not None for ref in self.seen)
        if alive:  # only a cycle keeps one now: collect and count again (a full collection is ~0.3 s)
            gc.collect()
            alive = sum(ref() is not None for ref in self.seen)
        self.most_alive = max(self.most_alive, alive)
        self.seen.append(weakref.ref(done.outcome))
        super().thread(done)


def _env() -> Environment:
    return Environment(stdout=io.StringIO(), stderr=io.StringIO())


def test_a_sweep_and_a_prune_keep_no_thread_once_told(any_kind):
    from symfonic_cli.erase.run import EraseRequest
    from symfonic_cli.erase.run import run as erase_run
    from symfonic_cli.selection import ERASE, PRUNE, choose
    from symfonic_cli.prune.run import PruneRequest
    from symfonic_cli.prune.run import run as prune_run

    url = any_kind.new_store(scenarios=False)
    write_aged(any_kind, url, IDLE, turns=2)
    loc = resolve_store(url)

    env = _env()
    report = Watching(env, "jsonl")
    every = choose(PRUNE, all_threads=True, batch_size=2)
    prune_run(PruneRequest(location=loc, options={}, selection=every, yes=True, batch_size=2), env, report)
    assert len(report.seen) == len(IDLE) and report.most_alive == 0
    assert [json.loads(x)["record"] for x in env.stdout.getvalue().splitlines()] == ["start"] + ["thread"] * len(IDLE) + ["end"]

    env = _env()
    report = Watching(env, "jsonl")
    sweep = choose(ERASE, inactive_for="90d", batch_size=2)
    erase_run(EraseRequest(location=loc, options={}, selection=sweep, yes=True, batch_size=2), env, report)
    assert len(report.seen) == len(IDLE) and report.most_alive == 0
    lines = [json.loads(x) for x in env.stdout.getvalue().splitlines()]
    assert [x["record"] for x in lines] == ["start"] + ["thread"] * len(IDLE) + ["end"]
    assert sorted(x["key"] for x in lines[1:-1]) == sorted(IDLE) and all(x["status"] == "erased" for x in lines[1:-1])
