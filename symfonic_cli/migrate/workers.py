"""migrate --jobs N: threads copied by worker processes, a chunk at a time."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from symfonic_cli.migrate.copy import Migrator, ThreadOutcome, run

CHUNK = 16  # threads per task sent to a worker: amortizes the round trip between processes


_worker: dict[str, Any] = {}


def run_parallel(src_loc, dst_loc, src_options: dict, dst_options: dict, keys: list[str], *, jobs: int,
                 dry_run: bool, verify_only: bool, to_plaintext: bool = False,
                 on_thread: Callable[[ThreadOutcome], None] | None = None, lock_timeout: float | None = None) -> list[ThreadOutcome]:
    """``run`` over ``jobs`` worker processes, outcomes in ``keys`` order.

    Workers are spawned, not forked, and open their own connections: nothing of the parent's
    (sockets, SQLite handles) is shared with them.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    size = max(1, min(CHUNK, -(-len(keys) // jobs)))
    chunks = [keys[i:i + size] for i in range(0, len(keys), size)]
    done: dict[str, ThreadOutcome] = {}
    with ProcessPoolExecutor(
        max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
        initializer=_worker_open,
        initargs=(os.getpid(), src_loc, dst_loc, src_options, dst_options, dry_run, not (dry_run or verify_only), _cipher_state(), to_plaintext, lock_timeout),
    ) as pool:
        futures = [pool.submit(_worker_run, chunk, verify_only) for chunk in chunks]
        try:
            for future in as_completed(futures):
                for outcome in future.result():
                    done[outcome.key] = outcome
                    if on_thread is not None:
                        on_thread(outcome)
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    return [done[k] for k in keys]


def _cipher_state():
    from symfonic_cli.codec import cipher

    return cipher.state()


def _worker_open(parent: int, src_loc, dst_loc, src_options: dict, dst_options: dict, dry_run: bool, writable: bool,
                 cipher_state=(None, False), to_plaintext: bool = False, lock_timeout: float | None = None) -> None:
    import atexit

    from symfonic_cli.codec import cipher
    from symfonic_cli.stores import open_store

    cipher.restore(cipher_state)  # the key file and the target's serializer, as in the parent

    _die_with_parent(parent)
    source = open_store(src_loc, writable=False, **src_options)
    target = open_store(dst_loc, writable=writable, **dst_options)
    if writable and lock_timeout is not None:
        target.set_lock_timeout(lock_timeout)
    _worker["migrator"] = Migrator(source, target, dry_run=dry_run, to_plaintext=to_plaintext)
    atexit.register(_worker_close)


def _worker_close() -> None:
    migrator = _worker.pop("migrator", None)
    if migrator is not None:
        for store in (migrator.target, migrator.source):
            try:
                store.close()
            except Exception:  # exiting anyway; the server ends the session when the socket closes
                pass


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent(parent: int) -> None:
    """A worker ends when the migrate process that started it is gone, however it went (SIGKILL
    included), instead of copying on for nobody: the kernel then closes its connections, and the
    server rolls back the thread it was writing (a thread is one transaction, so a rerun completes it).

    SIGTERM keeps its default action (end the process). On Linux the kernel sends SIGTERM when the
    parent dies (``PR_SET_PDEATHSIG``); on every platform a thread also watches the parent process
    id, which changes when the parent is gone (the worker is adopted).
    """
    import signal
    import threading
    import time

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the watcher below still notices

    def orphaned() -> bool:
        return os.getppid() != parent

    def watch() -> None:
        while not orphaned():
            time.sleep(0.25)
        os.kill(os.getpid(), signal.SIGTERM)

    if orphaned():  # the parent died before the death signal was armed
        os.kill(os.getpid(), signal.SIGTERM)
    threading.Thread(target=watch, name="symfonic-parent-watch", daemon=True).start()


def _worker_run(keys: list[str], verify_only: bool) -> list[ThreadOutcome]:
    return list(run(_worker["migrator"], keys, verify_only=verify_only))
