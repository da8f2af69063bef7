"""``thread erase --receipt FILE`` reads the audit file in constant memory (issue 21 item 5).

A SQLite store written by the real agent graph (tests/support: one scenario thread); its thread
is erased once with ``--receipt small.jsonl`` (the real start, thread and end lines). A large
receipt is that file followed by ~400 MB of ``thread`` lines of the same store, every one naming
the same key (so every line is parsed, the slow path). Then the same single-key erase is run,
side by side, against the small and the large file (the key is already-erased in both: the whole
file is read), each in its own process; its peak RSS comes from ``wait4``'s ``ru_maxrss`` (taken
by a small launcher process, so this one's memory is not counted).

Prints the medians and the ratio large/small (target: about 1, i.e. memory does not grow with
the file). Run: ``python benchmarks/bench_receipt_memory.py [--mb 400] [--runs 3] [--code DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT.parent))

KEY = "acme:_:s-001"


CODE: str | None = None  # --code DIR: run that checkout of symfonic_cli (e.g. an older commit) instead


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYMFONIC_")}
    if CODE:
        env["PYTHONPATH"] = CODE + os.pathsep + env.get("PYTHONPATH", "")
    return env


# The child's peak RSS must not include this process's: Linux carries the parent's high-water
# mark across fork and exec into ru_maxrss. A small launcher process forks the erase and reports it.
_LAUNCH = """import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable] + sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
os.write(2, b"\\nmaxrss-kb %d\\n" % usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _erase_rusage(store: str, receipt: Path) -> tuple[float, float, str]:
    """(peak RSS in MB, seconds, the thread's status) of one erase in a fresh process."""
    argv = [sys.executable, "-c", _LAUNCH, "-m", "symfonic_cli", "thread", "erase", "-s", store, "-t", KEY, "--yes",
            "--receipt", str(receipt), "-f", "json"]
    start = time.perf_counter()
    proc = subprocess.run(argv, env=_env(), capture_output=True, text=True, cwd=receipt.parent)  # not this checkout's dir
    elapsed = time.perf_counter() - start
    err, _, last = proc.stderr.rstrip().rpartition("\n")
    if proc.returncode != 0 or not last.startswith("maxrss-kb "):
        raise SystemExit(f"erase failed ({proc.returncode}): {proc.stderr.strip()}")
    return int(last.split()[1]) / 1024, elapsed, json.loads(proc.stdout)["threads"][0]["status"]


def build(tmp: Path, mb: int) -> tuple[str, Path, Path]:
    from tests.support.backends import SqliteBackend

    store = SqliteBackend(tmp).new_store(only=[KEY])
    small = tmp / "small.jsonl"
    _, _, status = _erase_rusage(store, small)
    assert status == "erased", status
    thread_line = next(json.loads(line) for line in small.read_text().splitlines() if json.loads(line)["record"] == "thread")
    large = tmp / "large.jsonl"
    target = mb * 1_000_000
    with large.open("wb") as f:
        f.write(small.read_bytes())
        n = 0
        while f.tell() < target:
            chunk = []
            for _ in range(1000):
                n += 1
                chunk.append(json.dumps({**thread_line, "receipt_id": f"{n:032x}", "ticket": f"T-{n}"}).encode() + b"\n")
            f.write(b"".join(chunk))
    os.chmod(large, 0o600)
    return store, small, large


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=400)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--code", help="a directory holding another symfonic_cli (git archive COMMIT | tar -x -C DIR)")
    args = ap.parse_args()
    global CODE
    CODE = args.code and os.path.abspath(args.code)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        store, small, large = build(tmp, args.mb)
        rss: dict[str, list[float]] = {"small": [], "large": []}
        secs: dict[str, list[float]] = {"small": [], "large": []}
        for _ in range(args.runs):
            for name, path in (("small", small), ("large", large)):  # side by side, alternating
                peak, elapsed, status = _erase_rusage(store, path)
                assert status == "already-erased", status
                rss[name].append(peak)
                secs[name].append(elapsed)
        s, big = statistics.median(rss["small"]), statistics.median(rss["large"])
        print(f"receipt {small.stat().st_size / 1e6:.3f} MB: peak RSS {s:.1f} MB, {statistics.median(secs['small']):.2f} s")
        print(f"receipt {large.stat().st_size / 1e6:.0f} MB: peak RSS {big:.1f} MB, {statistics.median(secs['large']):.2f} s")
        print(f"ratio large/small peak RSS: {big / s:.2f} (medians of {args.runs}; target about 1)")


if __name__ == "__main__":
    main()
