"""Every command at 20,000 / 200,000 / 1,000,000 threads, beside the raw job: wall, peak RSS, ratio.

    python -m benchmarks.bench_scale [--kinds sqlite,postgres,mongodb] [--sizes 20000,200000,1000000]
                                     [--jobs page,all,compat,usage,search,browse,mcp-list,mcp-search]
                                     [--reps N] [--fresh] [--table-only]

In a minute: ``python -m benchmarks.bench_scale --sizes 20000 --reps 1``. The big sizes take long
(generating the 1,000,000-thread stores: about ten minutes each; a run of every job: tens of
minutes): run them in the background with the output to a file.

Stores: benchmarks/scale_stores.py (a few hundred real 10-turn conversations, most of them pruned
to one checkpoint with ``thread prune --keep 1``, a mix of id forms, replicated in the database
under generated keys; cached under benchmarks/out/scale/, PostgreSQL in the benchmark cluster,
MongoDB on the SecantusDB daemon, to 100,000 threads: the wire-protocol server is slow).

Each job is a whole process (start-up included), ours and the raw job (benchmarks/scale_raw.py: the
store's driver and the standard library) in turn, round after round; wall is the median of --reps,
peak RSS the process's max RSS (/usr/bin/time, else wait4's rusage; for the browser and the MCP
server the largest of the process and the children it waited for). The browser's job runs the
real app headless (Textual's run_test) until the first thread row is drawn, then exits; the MCP
jobs start ``symfonic mcp`` over stdio, initialise, make the one call and stop (the call's own
time is shown apart: "page").

Results are appended to benchmarks/out/scale/results.jsonl, keyed by the checkout's commit: an
interrupted run resumes where it stopped (--fresh measures again). The table printed at the end is
read from that file (every kind and size of this commit measured so far), with, per job, the peak
RSS at the smallest and the largest size: memory must not grow with the store.
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

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "benchmarks" / "out" / "scale" / "results.jsonl"
TIME = "/usr/bin/time" if Path("/usr/bin/time").exists() else None
PY = sys.executable
MONGO_MAX = 100_000
PAGE = 20

# job -> (what the table calls it, our command's arguments after the store, the raw job)
JOBS: dict[str, tuple[str, list[str], str]] = {
    "page": ("threads list --limit 20", ["threads", "list", "--limit", str(PAGE)], "page"),
    "all": ("threads list -f json (all)", ["threads", "list", "-f", "json"], "all"),
    "compat": ("compat report -f json", ["compat", "report", "-f", "json"], "compat"),
    "usage": ("store usage -f json", ["store", "usage", "-f", "json"], "usage"),
    # JSON Lines: a JSON document is written whole or not at all, so -f json holds every hit (its
    # memory follows the hits, not the store); a line a hit streams.
    "search": ("threads search PHRASE -f jsonl", ["threads", "search", "{phrase}", "-f", "jsonl"], "search"),
    "browse": ("browse: first thread row", [], "page"),
    "mcp-list": ("mcp list_threads limit 20", [], "page"),
    "mcp-search": ("mcp search_messages limit 20", [], "search"),
}
# A second raw job, measured beside the first: the same bytes read as ours reads.
SAME_BYTES = {("sqlite", "usage"): "usage-marker"}
RAW_TEXT = {
    "usage-marker": "byte sums and every metadata read (the marker test)",
    "page": "GROUP BY thread ORDER BY max(id) DESC LIMIT 20",
    "all": "GROUP BY thread, a JSON row each",
    "compat": "envelope fields GROUP BY thread, tallied",
    "usage": "byte sums per thread",
    "search": "latest checkpoint's bytes of every thread, case folded",
}


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"


TIMEOUT = 1800.0  # seconds a process may take (--timeout): a job past it is recorded as failed


def _run_once(cmd: list[str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MB, stdout) of one whole process."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    env.pop("SYMFONIC_STORE", None)
    env["BENCH_SCALE_T0"] = repr(time.time())  # the browser's child counts its first row from here
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile() as rss:
        timed = [TIME, "-f", "%M", "-o", rss.name, *cmd] if TIME else cmd
        start = time.perf_counter()
        proc = subprocess.Popen(timed, stdout=out, stderr=err, env=env, cwd=ROOT, start_new_session=True)
        while True:  # wait4: this child's own rusage; polled, so a job past TIMEOUT is stopped
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > TIMEOUT:
                os.killpg(proc.pid, 9)
                os.wait4(proc.pid, 0)
                raise RuntimeError(f"timed out after {TIMEOUT:.0f} s")
            time.sleep(0.002)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        peak_kb = usage.ru_maxrss
        if TIME:
            try:
                peak_kb = int(Path(rss.name).read_text().split()[-1])
            except (ValueError, IndexError):
                pass
        code = proc.returncode
        if code != 0:
            err.seek(0)
            raise RuntimeError(f"exit {code}: {' '.join(cmd[:8])} ...: {err.read().decode(errors='replace')[-600:]}")
        out.seek(0)
        return wall, peak_kb / 1024, out.read().decode(errors="replace")


def _ours(job: str, url: str, phrase: str) -> list[str]:
    if job == "browse":
        return [PY, "-m", "benchmarks.bench_scale", "--child", "browse", url]
    if job == "mcp-list":
        return [PY, "-m", "benchmarks.bench_scale", "--child", "mcp", url, "list_threads", json.dumps({"limit": PAGE})]
    if job == "mcp-search":
        return [PY, "-m", "benchmarks.bench_scale", "--child", "mcp", url, "search_messages",
                json.dumps({"text": phrase, "limit": PAGE})]
    args = [a.replace("{phrase}", phrase) for a in JOBS[job][1]]
    return [PY, "-m", "symfonic_cli", *args[:2], "-s", url, *args[2:]]


def _measure(job: str, url: str, phrase: str, reps: int, kind: str) -> dict:
    ours_cmd = _ours(job, url, phrase)
    raw_cmd = [PY, "-m", "benchmarks.scale_raw", JOBS[job][2], url, phrase]
    ours: dict = {"wall": [], "rss": 0.0, "inner": []}
    raw: dict = {"wall": [], "rss": 0.0}
    same: dict = {"wall": [], "rss": 0.0}
    sides = [(ours, ours_cmd), (raw, raw_cmd)]
    if (kind, job) in SAME_BYTES:
        sides.append((same, [PY, "-m", "benchmarks.scale_raw", SAME_BYTES[(kind, job)], url, phrase]))
    for _ in range(reps):
        for side, cmd in sides:
            wall, rss, out = _run_once(cmd)
            side["wall"].append(wall)
            side["rss"] = max(side["rss"], rss)
            if side is ours and job in ("browse", "mcp-list", "mcp-search"):
                side["inner"].append(float(out.strip().splitlines()[-1]))
    return {
        "ours_s": statistics.median(ours["wall"]), "ours_mb": ours["rss"],
        "inner_s": statistics.median(ours["inner"]) if ours["inner"] else None,
        "raw_s": statistics.median(raw["wall"]), "raw_mb": raw["rss"],
        **({"same_s": statistics.median(same["wall"]), "same_mb": same["rss"]} if same["wall"] else {}),
    }


def _load() -> list[dict]:
    if not RESULTS.exists():
        return []
    return [json.loads(line) for line in RESULTS.read_text().splitlines() if line.strip()]


def _store(kind: str, size: int, server) -> str:
    from benchmarks import scale_stores

    if kind == "sqlite":
        return str(scale_stores.sqlite_store(size))
    if kind == "postgres":
        return scale_stores.postgres_store(size, server)
    return scale_stores.mongodb_store(size, server)


def _fmt_s(s: float | None) -> str:
    return "-" if s is None else f"{s:.2f}"


def print_markdown(kinds: list[str], sizes: list[int]) -> None:
    """The table for docs/benchmarks.md: each row's latest measurement (of any commit)."""
    latest: dict[tuple, dict] = {}
    for r in sorted(_load(), key=lambda r: r["when"]):
        if r["kind"] in kinds and r["size"] in sizes and "error" not in r:
            latest[(r["kind"], r["size"], r["job"])] = r
    for (kind, size, job), r in sorted(latest.items(), key=lambda kv: (kinds.index(kv[0][0]), kv[0][1], list(JOBS).index(kv[0][2]))):
        page = f" (page {r['inner_s']:.2f})" if r.get("inner_s") is not None else ""
        print(f"| {kind} | {size:,} | `{r.get('command', JOBS[job][0])}` | {r['ours_s']:.2f}{page} | {r['raw_s']:.2f} | {r['ours_s'] / r['raw_s']:.2f}x "
              f"| {r['ours_mb']:.0f} | {RAW_TEXT[JOBS[job][2]]} ({r['commit']}) |")
        if "same_s" in r:
            print(f"| | | | | {r['same_s']:.2f} | {r['ours_s'] / r['same_s']:.2f}x | | {RAW_TEXT[SAME_BYTES[(kind, job)]]} |")


def print_table(commit: str, kinds: list[str], sizes: list[int]) -> None:
    rows = [r for r in _load() if r["kind"] in kinds and r["size"] in sizes]
    rows.sort(key=lambda r: (r["commit"] == commit, r["when"]))  # this commit's last: it wins
    latest: dict[tuple, dict] = {}
    for r in rows:
        latest[(r["kind"], r["size"], r["job"])] = r
    print(f"\nbench_scale, checkout at {commit} (wall: median of each job's reps; ratio: ours / raw; "
          "each row's latest measurement, this commit's first, the commit it measured shown)")
    head = (f"{'kind':9}{'threads':>10}  {'command':32}{'ours s':>9}{'page s':>8}{'raw s':>8}{'ratio':>7}{'ours MB':>9}"
            f"{'raw MB':>8}  {'commit':8} raw job")
    print(head)
    print("-" * len(head))
    for (kind, size, job), r in sorted(latest.items(), key=lambda kv: (kinds.index(kv[0][0]), kv[0][1], list(JOBS).index(kv[0][2]))):
        if "error" in r:
            print(f"{kind:9}{size:>10,}  {JOBS[job][0]:32}  failed at {r['commit']}: {r['error'][:80]}")
            continue
        print(f"{kind:9}{size:>10,}  {r.get('command', JOBS[job][0]):32}{r['ours_s']:>9.2f}{_fmt_s(r.get('inner_s')):>8}{r['raw_s']:>8.2f}"
              f"{r['ours_s'] / r['raw_s']:>7.2f}{r['ours_mb']:>9.0f}{r['raw_mb']:>8.0f}  {r['commit']:8} {RAW_TEXT[JOBS[job][2]]}")
        if "same_s" in r:
            print(f"{'':9}{'':>10}  {'':32}{'':>9}{'':>8}{r['same_s']:>8.2f}{r['ours_s'] / r['same_s']:>7.2f}{'':>9}"
                  f"{r['same_mb']:>8.0f}  {'':8} {RAW_TEXT[SAME_BYTES[(kind, job)]]}")
    print("\npeak RSS by store size (memory flat: the largest within 1.25x + 10 MB of the smallest):")
    for kind in kinds:
        for job in JOBS:
            got = sorted((s, r) for (k, s, j), r in latest.items() if k == kind and j == job and "error" not in r)
            if len(got) < 2:
                continue
            (s0, r0), (s1, r1) = got[0], got[-1]
            flat = r1["ours_mb"] <= r0["ours_mb"] * 1.25 + 10
            print(f"  {kind:9}{JOBS[job][0]:32}{r0['ours_mb']:>6.0f} MB at {s0:>9,} -> {r1['ours_mb']:>6.0f} MB at {s1:>9,}: "
                  f"{'flat' if flat else 'GROWS'}")


def main() -> int:
    global TIMEOUT
    ap = argparse.ArgumentParser(description="every command at scale beside the raw job")
    ap.add_argument("--kinds", default="sqlite")
    ap.add_argument("--sizes", default="20000")
    ap.add_argument("--jobs", default=",".join(JOBS))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--fresh", action="store_true", help="measure again what this commit has measured")
    ap.add_argument("--table-only", action="store_true", help="print the table of what is measured and stop")
    ap.add_argument("--markdown", action="store_true", help="print the table for docs/benchmarks.md and stop")
    ap.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds a process may take (then: failed)")
    args = ap.parse_args()
    kinds = args.kinds.split(",")
    sizes = [int(s) for s in args.sizes.split(",")]
    jobs = args.jobs.split(",")
    for name in jobs:
        if name not in JOBS:
            raise SystemExit(f"unknown job {name!r} ({', '.join(JOBS)})")
    TIMEOUT = args.timeout
    commit = _commit()
    if args.table_only:
        print_table(commit, kinds, sizes)
        return 0
    if args.markdown:
        print_markdown(kinds, sizes)
        return 0
    from benchmarks import byte_compile, scale_stores

    byte_compile()
    done = {(r["kind"], r["size"], r["job"]) for r in _load() if r["commit"] == commit and "error" not in r}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    for kind in kinds:
        server, stop = None, None
        if kind == "postgres":
            from benchmarks import pg

            server, why = pg.available(ROOT / "benchmarks" / "out" / "pg")
            if server is None:
                print(f"postgres: {why}")
                continue
            stop = server.stop
        elif kind == "mongodb":
            from benchmarks.bench_mongodb import start_server

            server, proc = start_server()
            if proc is not None:
                def stop(p=proc) -> None:
                    p.terminate()
                    p.wait(timeout=60)
        try:
            for size in sizes:
                if kind == "mongodb" and size > MONGO_MAX:
                    print(f"mongodb: {size:,} threads skipped (at most {MONGO_MAX:,}: the wire-protocol server is slow)")
                    continue
                todo = [j for j in jobs if args.fresh or (kind, size, j) not in done]
                if not todo:
                    continue
                url = _store(kind, size, server)
                for job in todo:
                    print(f"[bench_scale] {time.strftime('%H:%M:%S')} {kind} {size:,} {JOBS[job][0]} ...", file=sys.stderr, flush=True)
                    record = {"commit": commit, "kind": kind, "size": size, "job": job, "command": JOBS[job][0], "reps": args.reps,
                              "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
                    try:
                        record.update(_measure(job, url, scale_stores.PHRASE, args.reps, kind))
                    except RuntimeError as exc:
                        record["error"] = str(exc)
                    with RESULTS.open("a") as f:
                        f.write(json.dumps(record) + "\n")
                    print(f"[bench_scale]   {json.dumps({k: v for k, v in record.items() if k not in ('commit', 'when')})}",
                          file=sys.stderr, flush=True)
        finally:
            if stop is not None:
                stop()
    print_table(commit, kinds, sizes)
    return 0


# -- the children: the browser's first row, one MCP call


def _child_browse(url: str) -> None:
    """The real app, headless, until the first frame holding a thread row is drawn; prints the
    seconds from the process's launch (as cli/browse.py starts it: the early read, then Textual)."""
    import asyncio

    started = float(os.environ.get("BENCH_SCALE_T0") or time.time())

    async def run() -> None:
        from datetime import datetime, timezone

        import symfonic_cli
        from symfonic_cli.browse.source import FIRST_PAGE, Filters, Source

        source = Source(symfonic_cli.open_store(url), now=lambda: datetime.now(timezone.utc))
        source.read_early(Filters(), FIRST_PAGE)
        from symfonic_cli.browse.app import BrowseApp
        from symfonic_cli.browse.itemlist import ItemList

        drawn: list[float] = []
        render_line = ItemList.render_line

        def first_drawn(self, y):  # the first frame holding rows: the first screen
            if self.items and not drawn:
                drawn.append(time.time())
            return render_line(self, y)

        ItemList.render_line = first_drawn  # type: ignore[method-assign]
        app = BrowseApp(source)
        async with app.run_test(size=(120, 40)):
            while not drawn:
                await asyncio.sleep(0.005)
            print(f"{drawn[0] - started:.4f}", flush=True)
            os._exit(0)  # the first row is the job: no waiting for the rest of the listing

    asyncio.run(run())


def _child_mcp(url: str, tool: str, arguments: str) -> None:
    """``symfonic mcp`` over stdio: initialise, make the one call, stop; prints the call's seconds."""
    import asyncio

    async def run() -> float:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters

        log = Path(tempfile.mkdtemp()) / "access.jsonl"
        params = StdioServerParameters(command=PY, args=["-m", "symfonic_cli", "mcp", "-s", url, "--all-tenants",
                                                         "--access-log", str(log)])
        async with Client(params) as client:
            t = time.perf_counter()
            result = await client.call_tool(tool, json.loads(arguments))
            seconds = time.perf_counter() - t
            if result.is_error:
                raise SystemExit(f"{tool} failed: {result.content}")
        return seconds

    print(f"{asyncio.run(run()):.4f}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        if sys.argv[2] == "browse":
            _child_browse(sys.argv[3])
        else:
            _child_mcp(*sys.argv[3:6])
        raise SystemExit(0)
    raise SystemExit(main())
