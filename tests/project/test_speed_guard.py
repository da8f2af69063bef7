"""The speed guard's goals live in one place: docs/benchmarks.md's table, which the guard reads."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _table() -> dict[str, float]:
    text = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    section = text.split("## The speed guard", 1)[1].split("\n## ", 1)[0]
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^\| `([a-z]+)` \|.*\| ([0-9.]+)x \|$", section, re.M)}


def test_the_guard_reads_every_goal_of_the_table_and_measures_each():
    # Run as a process: test modules never import benchmarks (docs/testing.md).
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "speed_guard.py"), "--goals"],
                          capture_output=True, text=True, cwd=str(REPO))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    read = json.loads(proc.stdout)
    table = _table()
    assert {"listing", "status", "search", "transcript", "usage", "prune", "compat"} <= set(table)
    assert read["goals"] == table
    assert sorted(read["checks"]) == sorted(table)
    assert all(goal > 0 for goal in table.values())
