"""The speed guard: each headline command against its raw baseline, side by side, against its goal.

Run ``python benchmarks/speed_guard.py`` before merging a branch that touches a store's read path
or a changing command's loop (docs/contributing.md). Each check runs our command and its raw
baseline as whole processes, alternately (the order swapped every round, after one warm-up run of
each that also checks the outputs agree), and prints the ratio of their wall medians beside its
goal; the exit code is 1 when a ratio exceeds its goal, 2 when the guard cannot run.

The goals live in ONE place, the table under "The speed guard" in docs/benchmarks.md: this script
reads them from there (``--goals`` prints what it read; tests/project/test_speed_guard.py holds
the table and the checks here to the same names).

Stores (SQLite, written by real graphs through the real saver, cached in benchmarks/out/ by
benchmarks/stores.py; the first run builds them, about 2.5 minutes): "many" (2,000 threads x 10
turns, 68,000 checkpoints), that store grown ten-fold (20,000 threads, 680,000 checkpoints, the
rows copied under new keys by bench_storage.grow) and "long-500" (one thread of 500 turns).

``--before DIR`` also times DIR's code (another checkout, e.g. a git worktree of main) in the same
rounds, printed under each check and not judged.

Run: ``python benchmarks/speed_guard.py [--reps N] [--only listing,status,...] [--before DIR] [--goals]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

DOC = REPO / "docs" / "benchmarks.md"
SECTION = "## The speed guard"
PY = sys.executable

# The raw baselines: what a person would write by hand, one process each (the store is argv[1]).
_CONNECT = "import sqlite3, sys\nc = sqlite3.connect(f'file:{sys.argv[1]}?mode=ro', uri=True)\n"
# What a user's script writes for a listing: the store's own SQL, then one JSON object a thread.
LISTING = _CONNECT.replace("import ", "import json, ", 1) + (
    "out = sys.stdout.write\nout('[')\nn = 0\n"
    "for k, count, first, last in c.execute('SELECT thread_id, count(*), min(checkpoint_id), max(checkpoint_id) "
    "FROM checkpoints GROUP BY thread_id ORDER BY max(checkpoint_id) DESC'):\n"
    "    out((',' if n else '') + '\\n  ' + json.dumps({'key': k, 'checkpoints': count, 'first': first, 'last': last}))\n"
    "    n += 1\nout('\\n]\\n' if n else ']\\n')\n"
)
LATEST_BYTES = _CONNECT + (
    "n = 0\nfor _, b in c.execute(\"SELECT m.thread_id, c.checkpoint FROM (SELECT thread_id, max(checkpoint_id) AS cid "
    "FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id) m JOIN checkpoints c ON c.thread_id = m.thread_id "
    "AND c.checkpoint_ns = '' AND c.checkpoint_id = m.cid\"):\n    n += len(b or b'')\nprint(n)\n"
)
USAGE = "import sys\nfrom pathlib import Path\nfrom benchmarks.bench_storage import raw_usage\nraw_usage(Path(sys.argv[1]))\n"
# The prune plan's counts, and the bytes its exact count of the messages only deleted checkpoints
# hold reads: every checkpoint of every thread (prune/lost.py reads each once).
PRUNE_PLAN = _CONNECT + (
    "ranked = ('SELECT thread_id, checkpoint_ns, checkpoint_id, row_number() OVER (PARTITION BY thread_id, checkpoint_ns "
    "ORDER BY checkpoint_id DESC) AS rn FROM checkpoints')\n"
    "writes = c.execute(f'SELECT count(*) FROM ({ranked}) AS r JOIN writes AS w ON w.thread_id = r.thread_id "
    "AND w.checkpoint_ns = r.checkpoint_ns AND w.checkpoint_id = r.checkpoint_id WHERE r.rn > 1').fetchone()[0]\n"
    "read = 0\nfor (blob,) in c.execute('SELECT checkpoint FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id'):\n"
    "    read += len(blob or b'')\n"
    "print(c.execute(f'SELECT count(*) FROM ({ranked}) WHERE rn > 1').fetchone()[0])\n"
)
COMPAT = _CONNECT + (
    "print(c.execute(\"SELECT json_extract(metadata, '$.symfonic_envelope.writer_line') AS line, "
    "json_extract(metadata, '$.symfonic_envelope.format_version') AS version, count(*) FROM checkpoints "
    "GROUP BY line, version\").fetchall())\n"
)


def _stores() -> dict[str, Path]:
    from benchmarks import stores
    from benchmarks.bench_storage import grow

    many = stores.sqlite_store("many")
    return {
        "many": many,
        "grown": grow(many, stores.OUT / "sqlite" / "grown2-20000.db", 20_000),
        "long-500": stores.sqlite_store("long-500"),
    }


def _rows(out: bytes) -> int:
    return len(json.loads(out))


def checks(paths: dict[str, Path]) -> dict[str, dict]:
    """name -> the command, its baseline, and what both outputs must agree on."""
    from benchmarks.stores import long_key

    grown, many, long_ = (str(paths[k]) for k in ("grown", "many", "long-500"))
    same_rows = lambda ours, raw: _rows(ours) == _rows(raw)  # noqa: E731 - every thread listed
    return {
        "listing": {"ours": ["threads", "list", "-s", grown, "-f", "json"], "raw": [LISTING, grown], "agree": same_rows},
        "status": {"ours": ["threads", "list", "-s", grown, "--status", "done,error,interrupted,pending", "-f", "json"],
                   "raw": [LISTING, grown], "agree": same_rows},
        "search": {"ours": ["threads", "search", "-s", many, "question 2 of thread 42", "-f", "json"],
                   "raw": [LATEST_BYTES, many], "agree": lambda ours, raw: _rows(ours) > 0 and int(raw) > 0},
        "transcript": {"ours": ["transcript", "show", "-s", long_, "-t", long_key(500), "-f", "json"],
                       "raw": None, "latest": [long_, long_key(500)], "agree": lambda ours, raw: _rows(ours) > 500},
        "usage": {"ours": ["store", "usage", "-s", many, "-f", "json"], "raw": [USAGE, many],
                  "agree": lambda ours, raw: json.loads(ours)["checkpoints"]["count"] == 68_000},
        "prune": {"ours": ["thread", "prune", "-s", many, "--all", "--keep", "1", "--dry-run", "-f", "json"],
                  "raw": [PRUNE_PLAN, many],
                  "agree": lambda ours, raw: sum(t["rows"]["checkpoints"] for t in json.loads(ours)["threads"]) == int(raw)},
        "compat": {"ours": ["compat", "report", "-s", many, "-f", "json", "--fail-on", ""], "raw": [COMPAT, many],
                   "agree": lambda ours, raw: json.loads(ours)["checkpoints"] == 68_000},
    }


def goals(doc: Path = DOC) -> dict[str, float]:
    """The goals table of docs/benchmarks.md: ``| `name` | ... | 1.5x |`` rows under SECTION."""
    text = doc.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    found: dict[str, float] = {}
    for line in text[start:end if end != -1 else None].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 2 and cells[-1].endswith("x"):
            found[cells[0].strip("`")] = float(cells[-1][:-1])
    return found


def _argv(spec: dict, which: str) -> list[str]:
    if which == "ours":
        return [PY, "-m", "symfonic_cli", *spec["ours"]]
    if spec["raw"] is None:  # transcript: the lower bound of decoding the thread's latest checkpoint alone
        return [PY, "-m", "tests.support.reference", *spec["latest"], "--latest-only"]
    code, *args = spec["raw"]
    return [PY, "-c", code, *args]


def _run(argv: list[str], cwd: Path = REPO) -> tuple[float, float, bytes]:
    """Wall and CPU seconds of one whole process, and its stdout (``python -m`` imports the
    checkout in ``cwd`` first: each checkout runs its own code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, cwd=str(cwd), env={**os.environ, "NO_COLOR": "1"})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"speed guard: {' '.join(argv[2:6])} ... failed ({proc.returncode}): {proc.stderr.decode()[-400:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--reps", type=int, default=5, help="measured rounds (default 5; medians)")
    ap.add_argument("--only", default="", help="comma-separated check names")
    ap.add_argument("--goals", action="store_true", help="print the goals read from docs/benchmarks.md and the checks, then exit")
    ap.add_argument("--before", type=Path, help="another checkout (e.g. a git worktree of main): its commands timed in the same rounds")
    a = ap.parse_args(argv)
    wanted = goals()
    names = list(checks({"grown": Path("-"), "many": Path("-"), "long-500": Path("-")}))
    if a.goals:
        print(json.dumps({"goals": wanted, "checks": names}))
        return 0 if set(wanted) == set(names) else 2
    if set(wanted) != set(names):
        print(f"speed guard: docs/benchmarks.md lists {sorted(wanted)}, the guard measures {sorted(names)}", file=sys.stderr)
        return 2
    chosen = [n for n in names if not a.only or n in a.only.split(",")]
    from benchmarks import byte_compile

    byte_compile()
    t0 = time.perf_counter()
    specs = checks(_stores())
    print(f"stores ready in {time.perf_counter() - t0:.0f} s; {a.reps} rounds, each command and its baseline alternately")
    walls: dict[tuple[str, str], list[float]] = {}
    cpus: dict[tuple[str, str], list[float]] = {}
    for name in chosen:  # warm-up: page cache, byte code, and the outputs agree
        ours, raw = (_run(_argv(specs[name], w))[2] for w in ("ours", "raw"))
        if not specs[name]["agree"](ours, raw.strip()):
            print(f"speed guard: {name}: the command's output does not agree with its baseline's", file=sys.stderr)
            return 2
    if a.before is not None:
        subprocess.run([PY, "-m", "compileall", "-q", str(a.before / "symfonic_cli")], check=True, capture_output=True)
    contenders = ("ours", "raw", "before") if a.before is not None else ("ours", "raw")
    for r in range(a.reps):
        for name in chosen:
            for which in (contenders[::-1] if r % 2 else contenders):
                argv_ = _argv(specs[name], "ours" if which == "before" else which)
                wall, cpu, _ = _run(argv_, a.before if which == "before" else REPO)
                walls.setdefault((name, which), []).append(wall)
                cpus.setdefault((name, which), []).append(cpu)
    failed = []
    print(f"{'check':12}{'ours s':>9}{'raw s':>9}{'ratio':>8}{'goal':>7}{'cpu ratio':>11}  ours")
    for name in chosen:
        ours, raw = (statistics.median(walls[(name, w)]) for w in ("ours", "raw"))
        cpu = statistics.median(cpus[(name, "ours")]) / statistics.median(cpus[(name, "raw")])
        ratio = ours / raw
        ok = ratio <= wanted[name]
        failed += [] if ok else [name]
        print(f"{name:12}{ours:9.3f}{raw:9.3f}{ratio:7.2f}x{wanted[name]:6.2f}x{cpu:10.2f}x  {' '.join(specs[name]['ours'][:2])}"
              f"{'' if ok else '   OVER GOAL'}")
        if a.before is not None:
            was = statistics.median(walls[(name, "before")])
            print(f"{'  before':12}{was:9.3f}{raw:9.3f}{was / raw:7.2f}x   (--before, not judged)")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; {time.perf_counter() - t0:.0f} s in all")
    if failed:
        print(f"speed guard: over goal: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
