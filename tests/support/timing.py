"""Opt-in pytest plugin: what each test costs, for finding where the suite's time goes on a machine
others are using too (wall time there says little).

    SYMFONIC_TIMING=timing.jsonl python -m pytest -p tests.support.timing -n 2 tests/browse

Appends one JSON line per test (setup, call and teardown together): ``wall``; ``cpu``, this
process's CPU (all its threads); ``child``, the CPU of the processes it started and waited for;
``queued``, the time its main thread was ready to run but waiting for a core; ``idle``, the rest
of the wall time: sleeping, or waiting on a process, a server or the disk. ``python -m
tests.support.timing timing.jsonl`` sums them and lists the tests that cost most. Linux only
(``/proc/<pid>/task/<pid>/schedstat``); never loaded unless asked for.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict

import pytest

_out: list = []


def _sample() -> tuple[float, float, float, float, float]:
    times = os.times()
    try:
        with open(f"/proc/self/task/{os.getpid()}/schedstat", encoding="ascii") as f:
            on_cpu, queued, _ = f.read().split()
    except OSError:
        on_cpu = queued = "0"
    return (time.perf_counter(), times.user + times.system, times.children_user + times.children_system,
            int(on_cpu) / 1e9, int(queued) / 1e9)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before = _sample()
    yield
    wall, cpu, child, main_cpu, queued = (b - a for a, b in zip(before, _sample()))
    if not _out:
        _out.append(open(os.environ.get("SYMFONIC_TIMING", "timing.jsonl"), "a", encoding="utf-8"))
    record = {"id": item.nodeid, "wall": round(wall, 4), "cpu": round(cpu, 4), "child": round(child, 4),
              "queued": round(queued, 4), "idle": round(max(0.0, wall - main_cpu - queued - child), 4),
              "worker": os.environ.get("PYTEST_XDIST_WORKER", "main")}
    _out[0].write(json.dumps(record) + "\n")
    _out[0].flush()


def summary(path: str, top: int = 20) -> str:
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    total = {k: sum(r[k] for r in rows) for k in ("wall", "cpu", "child", "queued", "idle")}
    lines = [f"{len(rows)} tests: " + ", ".join(f"{k} {v:.0f} s" for k, v in total.items())]
    by_dir: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for r in rows:
        folder = "/".join(r["id"].split("::")[0].split("/")[:2])
        by_dir[folder][0] += r["cpu"] + r["child"]
        by_dir[folder][1] += r["idle"]
    lines.append("cpu + child, idle by folder:")
    lines += [f"  {c:7.1f} {i:7.1f}  {d}" for d, (c, i) in sorted(by_dir.items(), key=lambda kv: -kv[1][0])]
    lines.append(f"top {top} by cpu + child (cpu + child, idle, wall):")
    for r in sorted(rows, key=lambda r: -(r["cpu"] + r["child"]))[:top]:
        lines.append(f"  {r['cpu'] + r['child']:6.2f} {r['idle']:6.2f} {r['wall']:6.2f}  {r['id']}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(sys.argv[1]))
