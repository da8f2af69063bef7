"""``bench_live.py --jobs N --scale-store scale_N``: ``thread prune --jobs N`` beside ``--jobs 1`` on a
wide store of benchmarks/scale_stores.py (issue #45 item 7), in bench_live's way: each arm its own
copy of the store (``CREATE DATABASE ... TEMPLATE``, dropped at the end), the safety run's options
(``--max-replica-lag 10s``, the default lock timeout), another session taking a random thread's rows
with ``SELECT ... FOR UPDATE`` every 20 ms (its longest wait), the peak RSS of the whole process
(/usr/bin/time -v), the rows left compared (equal), the load average before and after each run.

The work is a tenant's share (``--tenants tenant-00,tenant-01``: one ``--tenant X --all-sessions``
run an arm per tenant, the arms in turn, the same tenant on both copies) or the whole store
(``--tenants all``: ``--all``). In the scale stores a tenant is 1/40 of the threads; every 25th
template thread keeps its history, so tenants 00, 05, 10, ... hold all the threads to prune (a
fifth of theirs) and the others none: both kinds are measured, and the whole store's time is
projected from their medians (printed as a projection, with the tenants counted in the store).
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from typing import Any, Callable

PRUNE = ["--keep", "1", "--yes", "-f", "jsonl", "--max-replica-lag", "10s"]


def _digest(conn: Any, like: str) -> list:
    """The rows of the keys ``like`` in the three tables, hashed (equal rows, equal digests)."""
    return [conn.execute(f"SELECT count(*), md5(coalesce(string_agg(md5(t::text), '' ORDER BY md5(t::text)), '')) FROM {table} t "
                         "WHERE thread_id LIKE %s", (like,)).fetchone()
            for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")]


def _classes(conn: Any) -> dict[str, bool]:
    """tenant -> whether any of its threads has more than one checkpoint (something to prune)."""
    rows = conn.execute("SELECT split_part(thread_id, ':', 1), bool_or(n > 1) FROM (SELECT thread_id, count(*) AS n FROM checkpoints "
                        "GROUP BY thread_id) AS t GROUP BY 1").fetchall()
    return {t: bool(more) for t, more in rows}


def _copy(admin: Any, db: str, store: str) -> None:
    """``CREATE DATABASE db TEMPLATE store``, which needs a moment with no one else connected to the
    store (other benchmarks read it): tried again every second, for up to 15 minutes."""
    import psycopg

    deadline = time.monotonic() + 60
    while True:
        try:
            admin.execute(f"CREATE DATABASE {db} TEMPLATE {store}")
            return
        except psycopg.errors.ObjectInUse:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def _private_source(server: Any, store: str) -> str:
    """The store generated again under another name by benchmarks/scale_stores.py (the same rows:
    the same template, the same keys), for copies while others keep ``store`` busy."""
    from benchmarks import scale_stores

    name = f"bench_jobs_src_{store}"
    scale_stores.postgres_store(int(store.rsplit("_", 1)[1]), server, db=name)
    return name


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def bench_scale_jobs(server: Any, store: str, tenants: list[str], jobs: int, *, run: Callable[..., tuple[float, int]],
                     reuse: bool = False) -> None:
    """``run(args, peak=True)`` is bench_live's child-process runner: (seconds, peak RSS KiB)."""
    import psycopg

    copies = {1: f"bench_jobs_{store}_1", jobs: f"bench_jobs_{store}_{jobs}"}
    source = store
    with psycopg.connect(server.url("postgres"), autocommit=True) as admin:
        for db in [copies[1], copies[jobs]]:
            exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (db,)).fetchone()
            if exists and reuse:
                continue
            admin.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
            start = time.perf_counter()
            try:
                _copy(admin, db, source)
            except psycopg.errors.ObjectInUse:  # others read it for minutes: generated again privately
                print(f"  {store} is in use: generating it again as bench_jobs_src_{store}", flush=True)
                source = _private_source(server, store)
                copies[0] = source  # dropped at the end with the copies
                _copy(admin, db, source)
            print(f"  copy {db} of {source}: {time.perf_counter() - start:.0f} s", flush=True)
    try:
        with psycopg.connect(server.url(store)) as conn:  # the store itself, read only: a reused copy may be pruned in part
            classes = _classes(conn) if tenants != ["all"] else {}
        runs: dict[tuple[str, int], tuple[float, float, int, int, str]] = {}
        for r, tenant in enumerate(tenants):
            like = "%" if tenant == "all" else tenant + ":%"
            select = ["--all"] if tenant == "all" else ["--tenant", tenant, "--all-sessions"]
            with psycopg.connect(server.url(copies[1])) as conn:
                keys = [k for (k,) in conn.execute("SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id LIKE %s", (like,))]
            digests = {}
            for arm in ([1, jobs] if r % 2 == 0 else [jobs, 1]):
                url = server.url(copies[arm])
                before = _load()
                args = ["thread", "prune", "-s", url, *select, *PRUNE, "--jobs", str(arm)]
                took, longest, n, rss = _probed(url, keys, lambda args=args: run(args, peak=True))
                runs[(tenant, arm)] = (took, longest, n, rss, f"{before} -> {_load()}")
                with psycopg.connect(url) as conn:
                    digests[arm] = _digest(conn, like)
                print(f"  {tenant} ({len(keys):,} threads) --jobs {arm}: {took:.1f} s ({len(keys) / took:,.0f} threads/s), peak RSS "
                      f"{rss / 1024:.0f} MiB, {n:,} probes, the longest waited {longest * 1000:.0f} ms; load {runs[(tenant, arm)][4]}",
                      flush=True)
            if digests[1] != digests[jobs]:
                raise SystemExit(f"{tenant}: --jobs 1 and --jobs {jobs} left different rows")
        _summary(runs, tenants, jobs, classes)
    finally:
        with psycopg.connect(server.url("postgres"), autocommit=True) as admin:
            for db in copies.values():
                admin.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")


def _probed(url: str, keys: list[str], call: Callable[[], tuple[float, int]]) -> tuple[float, float, int, int]:
    """``call()`` while another session takes a random thread's checkpoints FOR UPDATE every 20 ms:
    (seconds, the longest wait, probes, peak RSS KiB)."""
    import random

    import psycopg

    done = threading.Event()
    waits: list[float] = []

    def probe() -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            while not done.is_set():
                start = time.perf_counter()
                with conn.transaction():
                    conn.execute("SELECT 1 FROM checkpoints WHERE thread_id = %s FOR UPDATE", (random.choice(keys),)).fetchall()
                    waits.append(time.perf_counter() - start)
                time.sleep(0.02)

    t = threading.Thread(target=probe, daemon=True)
    t.start()
    try:
        took, rss = call()
    finally:
        done.set()
        t.join()
    return took, max(waits, default=0.0), len(waits), rss


def _summary(runs: dict, tenants: list[str], jobs: int, classes: dict[str, bool]) -> None:
    def med(arm: int, which: list[str]) -> float:
        return statistics.median(runs[(t, arm)][0] for t in which)

    groups = [("the whole store", tenants)] if tenants == ["all"] else [
        ("tenants with threads to prune", [t for t in tenants if classes.get(t)]),
        ("tenants with nothing to prune", [t for t in tenants if not classes.get(t)])]
    print(f"  prune --keep 1 (--max-replica-lag 10s), --jobs {jobs} beside --jobs 1, each on its own copy, the same rows left:")
    for label, which in groups:
        if not which:
            continue
        one, many = med(1, which), med(jobs, which)
        print(f"    {label} ({', '.join(which)}): median {many:.1f} s against {one:.1f} s, {one / many:.2f}x faster")
    rss = {a: max(v[3] for (t, arm), v in runs.items() if arm == a) / 1024 for a in (1, jobs)}
    wait = {a: max(v[1] for (t, arm), v in runs.items() if arm == a) * 1000 for a in (1, jobs)}
    print(f"    peak RSS {rss[jobs]:.0f} MiB against {rss[1]:.0f} MiB; another session's longest wait {wait[jobs]:.0f} ms against "
          f"{wait[1]:.0f} ms")
    if tenants != ["all"] and all(which for _, which in groups):
        full = sum(classes.values())
        plain = len(classes) - full
        for arm in (1, jobs):
            total = full * med(arm, groups[0][1]) + plain * med(arm, groups[1][1])
            print(f"    projected whole store (--all), --jobs {arm}: {full} tenants x {med(arm, groups[0][1]):.1f} s + {plain} x "
                  f"{med(arm, groups[1][1]):.1f} s = {total / 60:.0f} min (a projection from the tenants measured)")
