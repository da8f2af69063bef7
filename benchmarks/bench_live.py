"""Issue #38 at scale: ``thread prune --all --keep 1`` on a live primary with its safety on, against
the same run with it off, side by side, in one run.

- safety: the defaults (one runner: the run lock; ``--lock-timeout 5``; ``--piece-size 500``) and,
  on PostgreSQL, ``--max-replica-lag 10s`` (the lag read from pg_stat_replication between threads);
- bare: the same command in a child where the run lock, the lock timeout and the lag checks are
  switched off (``_BARE``): what the safety costs. Target: safety within 1.5x of bare.
- memory: the safety run's peak RSS (/usr/bin/time -v) at N/10 and N threads: flat.
- lock wait: while the safety run prunes, another session takes a thread's rows every 20 ms
  (PostgreSQL ``SELECT ... FOR UPDATE`` on a random thread's checkpoints, SQLite ``BEGIN IMMEDIATE``,
  the file's one write lock) and the longest it was kept waiting is reported: at most the lock timeout.

Stores: short chats (3 turns through the real agent graph, 10 to 11 checkpoints a thread), BASE
threads written by the graph and its saver, grown N/BASE-fold with ``INSERT ... SELECT`` (the copies'
thread ids get a suffix; every other byte is the real rows', checked), cached in benchmarks/out.
Both arms then hold the same rows (checked). Medians of ``--repeat`` runs, the arms in turn.
Run: ``python benchmarks/bench_live.py [--threads 20000] [--pg-threads 4000] [--repeat 3] [--no-postgres] [--one-pass] [--jobs N]``
or, at a million threads, ``python benchmarks/bench_live.py --jobs 3 --scale-store scale_1000000 [--tenants T1,T2,...|all]``
(benchmarks/jobs_scale.py: tenants' shares or the whole store, each arm on its own copy)
(``--one-pass``, for 200,000 threads: one run an arm, the safety run measured for peak RSS and lock waits too;
``--jobs N``: on PostgreSQL the safety run with one job against N, each probed and measured, instead of the bare arm).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT.parent))

from benchmarks import stores  # noqa: E402
from benchmarks.bench_storage import _digest, _grow_pg, _pg_digest, cached_database, grow, written_by_saver  # noqa: E402

BASE, TURNS = 1000, 3
PRUNE = ["thread", "prune", "--all", "--keep", "1", "--yes", "-f", "jsonl"]
# The bare arm: the same entry point with the run lock, the lock timeout and the lag checks off.
_BARE = (
    "import sys\n"
    "from symfonic_cli.prune import run as prune\n"
    "from symfonic_cli.stores.sqlite.erase import SqliteErase\n"
    "from symfonic_cli.stores.postgres.erase import PostgresErase\n"
    "prune.hold_run_lock = lambda *a, **k: None\n"
    "prune.check_replicas = lambda *a, **k: None\n"
    "for cls in (SqliteErase, PostgresErase):\n"
    "    cls.set_lock_timeout = lambda self, seconds: None\n"
    "    cls.replica_lag = lambda self: None\n"
    "from symfonic_cli.cli.app import main\n"
    "sys.argv = ['symfonic', *sys.argv[1:]]\n"
    "main()\n"
)


def _median(xs: list[float]) -> float:
    return statistics.median(xs)


def _run(args: list[str], *, bare: bool = False, peak: bool = False) -> tuple[float, int]:
    """Seconds and (with ``peak``) the peak RSS in KiB of one prune in a child process."""
    cmd = [sys.executable, "-c", _BARE, *args] if bare else [sys.executable, "-m", "symfonic_cli", *args]
    if peak and os.path.exists("/usr/bin/time"):
        cmd = ["/usr/bin/time", "-v", *cmd]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"prune failed ({proc.returncode}): {proc.stderr.strip()[-800:]}")
    rss = next((int(x.rsplit(":", 1)[1]) for x in proc.stderr.splitlines() if "Maximum resident set size" in x), -1)
    return took, rss


def sqlite_base() -> Path:
    path = stores.OUT / "sqlite" / f"live-base-{BASE}.db"
    if path.exists():
        return path
    from langgraph.checkpoint.sqlite import SqliteSaver

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".partial")
    tmp.unlink(missing_ok=True)
    conn = sqlite3.connect(str(tmp), check_same_thread=False)
    conn.execute("PRAGMA synchronous = OFF")
    saver = SqliteSaver(conn)
    saver.setup()
    stores._write_many(saver, threads=BASE, turns=TURNS)
    conn.close()
    os.replace(tmp, path)
    return path


def _waits(take: Callable[[], float], done: threading.Event) -> list[float]:
    """How long each attempt to take a thread's rows waited, every 20 ms until ``done``."""
    out: list[float] = []
    while not done.is_set():
        out.append(take())
        time.sleep(0.02)
    return out


def _with_prober(args: list[str], take: Callable[[], float], *, peak: bool = False) -> tuple[float, float, int, int]:
    """The safety prune with another session probing its locks: (seconds, longest wait, probes, peak RSS KiB)."""
    done = threading.Event()
    result: dict[str, Any] = {}
    t = threading.Thread(target=lambda: result.setdefault("w", _waits(take, done)))
    t.start()
    try:
        took, rss = _run(args, peak=peak)
    finally:
        done.set()
        t.join()
    return took, max(result["w"], default=0.0), len(result["w"]), rss


def _measure(threads: int, repeat: int, one_pass: bool, *, grown: Any, tenth: Any, fresh: Callable[[Any, str], Any],
             done: Callable[[Any], None], digest: Callable[[Any], Any], args: Callable[[Any, str], list[str]],
             prober: Callable[[Any], tuple[Any, Callable[[], float]]], safety_words: str, probe_words: str) -> None:
    """Both arms on fresh copies (``fresh(src, name)``; ``done`` when measured), in turn, their rows
    compared; the safety run's peak RSS at a tenth and at all; another session's longest wait.
    ``one_pass`` (at scale): one run an arm, the safety run giving the peak and the waits too."""
    times: dict[str, list[float]] = {"safety": [], "bare": []}
    peaks: dict[int, int] = {}
    probed: tuple[float, float, int] | None = None

    def probed_run(target: Any, peak: bool) -> tuple[float, float, int, int]:
        probe, take = prober(target)
        try:
            return _with_prober(args(target, "safety"), take, peak=peak)
        finally:
            probe.close()

    for r in range(1 if one_pass else repeat):
        digests = {}
        for arm in (["bare", "safety"] if one_pass or r % 2 else ["safety", "bare"]):
            target = fresh(grown, arm)
            if one_pass and arm == "safety":
                took, longest, n, rss = probed_run(target, peak=True)
                times[arm].append(took)
                peaks[threads], probed = rss, (took, longest, n)
            else:
                times[arm].append(_run(args(target, arm), bare=arm == "bare")[0])
            digests[arm] = digest(target)
            done(target)
            print(f"  {arm}: {times[arm][-1]:.1f} s", flush=True)
        if digests["safety"] != digests["bare"]:
            raise SystemExit("the two arms left different rows")
    s, b = _median(times["safety"]), _median(times["bare"])
    print(f"  prune --all --keep 1: safety{safety_words} {s:.2f} s, bare {b:.2f} s, ratio {s / b:.2f} (target <= 1.5); "
          f"runs {times}; same rows: yes")
    for label, src in ((max(threads // 10, BASE), tenth), (threads, grown)):
        if label not in peaks:
            target = fresh(src, "peak")
            peaks[label] = _run(args(target, "safety"), peak=True)[1]
            done(target)
    (n1, p1), (n2, p2) = sorted(peaks.items())
    print(f"  peak RSS: {n1:,} threads {p1 / 1024:.0f} MiB, {n2:,} threads {p2 / 1024:.0f} MiB, ratio {p2 / p1:.2f} (flat: ~1)")
    if probed is None:
        target = fresh(grown, "probe")
        probed = probed_run(target, peak=False)[:3]
        done(target)
    took, longest, n = probed
    print(f"  lock wait: {n:,} {probe_words} during the prune ({took:.1f} s): the longest waited {longest * 1000:.0f} ms "
          "(--lock-timeout 5 s)")


def _measure_jobs(jobs: int, repeat: int, *, grown: Any, fresh: Callable[[Any, str], Any], done: Callable[[Any], None],
                  digest: Callable[[Any], Any], args: Callable[[Any, str], list[str]],
                  prober: Callable[[Any], tuple[Any, Callable[[], float]]], probe_words: str) -> None:
    """``--jobs`` (issue #45): the safety run with one job and with ``jobs``, in turn on fresh
    copies, each probed by another session and measured for peak RSS; the rows left compared."""
    runs: dict[int, list[tuple[float, float, int, int]]] = {1: [], jobs: []}
    for r in range(repeat):
        digests = {}
        for arm in ([1, jobs] if r % 2 == 0 else [jobs, 1]):
            target = fresh(grown, f"jobs{arm}")
            probe, take = prober(target)
            try:
                runs[arm].append(_with_prober([*args(target, "safety"), "--jobs", str(arm)], take, peak=True))
            finally:
                probe.close()
            digests[arm] = digest(target)
            done(target)
            took, longest, n, rss = runs[arm][-1]
            print(f"  --jobs {arm}: {took:.1f} s, peak RSS {rss / 1024:.0f} MiB, {n:,} {probe_words}, the longest waited "
                  f"{longest * 1000:.0f} ms", flush=True)
        if digests[1] != digests[jobs]:
            raise SystemExit("--jobs 1 and --jobs N left different rows")
    one, many = (_median([x[0] for x in runs[a]]) for a in (1, jobs))
    print(f"  prune --all --keep 1 --jobs {jobs}: {many:.1f} s against --jobs 1 {one:.1f} s, {one / many:.2f}x faster; peak RSS "
          f"{max(x[3] for x in runs[jobs]) / 1024:.0f} MiB against {max(x[3] for x in runs[1]) / 1024:.0f} MiB; the longest wait of "
          f"another session {max(x[1] for x in runs[jobs]) * 1000:.0f} ms against {max(x[1] for x in runs[1]) * 1000:.0f} ms; "
          "same rows: yes")


def bench_sqlite(threads: int, repeat: int, work: Path, one_pass: bool = False) -> None:
    base = sqlite_base()
    grown = grow(base, stores.OUT / "sqlite" / f"live-grown-{threads}.db", threads)
    tenth = grow(base, stores.OUT / "sqlite" / f"live-grown-{threads // 10}.db", threads // 10) if threads // 10 >= 2 * BASE else base
    cps = sqlite3.connect(grown).execute("SELECT count(*), count(DISTINCT thread_id) FROM checkpoints").fetchone()
    print(f"SQLite: {cps[1]:,} threads, {cps[0]:,} checkpoints ({grown.stat().st_size / 1e9:.2f} GB), grown from {BASE} written by the graph",
          flush=True)

    def fresh(src: Path, name: str) -> Path:
        dst = work / f"{name}.db"
        shutil.copyfile(src, dst)
        with sqlite3.connect(dst) as conn:  # as SqliteSaver leaves a store (grow() keeps the copy in one file)
            conn.execute("PRAGMA journal_mode = WAL")
        return dst

    def done(path: Path) -> None:
        for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            leftover.unlink(missing_ok=True)

    def prober(path: Path) -> tuple[sqlite3.Connection, Callable[[], float]]:
        probe = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)  # used by the prober thread

        def take() -> float:
            start = time.perf_counter()
            probe.execute("BEGIN IMMEDIATE")  # the file's one write lock, as an agent's next write takes it
            waited = time.perf_counter() - start
            probe.execute("ROLLBACK")
            return waited

        return probe, take

    _measure(threads, repeat, one_pass, grown=grown, tenth=tenth, fresh=fresh, done=done, digest=_digest,
             args=lambda path, arm: ["thread", "prune", "-s", str(path), *PRUNE[2:]], prober=prober,
             safety_words="", probe_words="writes by another connection")


def _pg_base(server) -> str:
    return cached_database(server, f"bench_live_src_{BASE}", "symfonic live benchmark source, complete", written_by_saver(BASE, TURNS))


def _pg_grown(server, src: str, threads: int) -> str:
    factor = max(1, threads // BASE)
    if factor == 1:
        return src
    return cached_database(server, f"{src}_x{factor}", "symfonic live benchmark grown store, complete",
                           lambda url: _grow_pg(url, factor), template=src)


def bench_postgres(threads: int, repeat: int, one_pass: bool = False, jobs: int = 1) -> None:
    import psycopg

    from benchmarks import pg

    server, why = pg.available(stores.OUT / "pg")
    if server is None:
        print(f"PostgreSQL: {why}")
        return
    try:
        base = _pg_base(server)
        grown = _pg_grown(server, base, threads)
        tenth = _pg_grown(server, base, threads // 10) if jobs == 1 else grown

        def fresh(template: str, name: str) -> str:
            db = f"bench_live_{name}"
            with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
                conn.execute(f"CREATE DATABASE {db} TEMPLATE {template}")
            return server.url(db)

        with psycopg.connect(server.url(grown)) as conn:
            n, keys = conn.execute("SELECT count(*), array_agg(DISTINCT thread_id) FROM checkpoints").fetchone()
        print(f"PostgreSQL: {len(keys):,} threads, {n:,} checkpoints, grown from {BASE} written by the graph", flush=True)

        def prober(url: str) -> tuple[Any, Callable[[], float]]:
            probe = psycopg.connect(url, autocommit=True)

            def take() -> float:
                key = random.choice(keys)
                start = time.perf_counter()
                with probe.transaction():
                    probe.execute("SELECT 1 FROM checkpoints WHERE thread_id = %s FOR UPDATE", (key,)).fetchall()
                    waited = time.perf_counter() - start
                return waited

            return probe, take

        def args(url: str, arm: str) -> list[str]:
            return ["thread", "prune", "-s", url, *PRUNE[2:], *(["--max-replica-lag", "10s"] if arm == "safety" else [])]

        probe_words = "SELECT ... FOR UPDATE of a random thread's checkpoints by another session"
        if jobs > 1:
            _measure_jobs(jobs, 1 if one_pass else repeat, grown=grown, fresh=fresh, done=lambda url: None, digest=_pg_digest,
                          args=args, prober=prober, probe_words=probe_words)
            return
        _measure(threads, repeat, one_pass, grown=grown, tenth=tenth, fresh=fresh, done=lambda url: None, digest=_pg_digest,
                 args=args, prober=prober, safety_words=" (with --max-replica-lag 10s)", probe_words=probe_words)
    finally:
        server.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=20_000)
    ap.add_argument("--pg-threads", type=int, default=4_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-postgres", action="store_true")
    ap.add_argument("--no-sqlite", action="store_true")
    ap.add_argument("--one-pass", action="store_true",
                    help="at scale: one bare run and one safety run that also gives the peak RSS and the lock waits")
    ap.add_argument("--jobs", type=int, default=1,
                    help="PostgreSQL: the safety run with --jobs 1 against --jobs N (time, peak RSS, another session's longest wait)")
    ap.add_argument("--scale-store", help="with --jobs N: a database of benchmarks/scale_stores.py (scale_1000000), copied per arm")
    ap.add_argument("--tenants", default="tenant-00,tenant-01,tenant-05,tenant-02,tenant-10,tenant-03",
                    help="with --scale-store: the tenants pruned, one run an arm each ('all': the whole store)")
    ap.add_argument("--reuse-copies", action="store_true", help="with --scale-store: keep existing copies (tenants not yet pruned)")
    args = ap.parse_args()
    if args.scale_store:
        from benchmarks import pg
        from benchmarks.jobs_scale import bench_scale_jobs

        server, why = pg.available(stores.OUT / "pg")
        if server is None:
            raise SystemExit(f"PostgreSQL: {why}")
        try:
            print(f"PostgreSQL {args.scale_store}: thread prune --jobs {args.jobs} beside --jobs 1", flush=True)
            bench_scale_jobs(server, args.scale_store, args.tenants.split(","), args.jobs, run=_run, reuse=args.reuse_copies)
        finally:
            server.stop()
        return
    work = Path(tempfile.mkdtemp(prefix="symfonic-bench-live-", dir=str(stores.OUT)))
    try:
        if not args.no_sqlite:
            bench_sqlite(args.threads, args.repeat, work, args.one_pass)
        if not args.no_postgres:
            bench_postgres(args.pg_threads, args.repeat, args.one_pass, args.jobs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
