"""A PostgreSQL server for the benchmarks, started the way the tests start theirs.

Reuses tests/support/pg_server.py (``LocalCluster``), but keeps the cluster in the directory the
caller gives (benchmarks/out/pg) so the generated stores survive between runs. ``SYMFONIC_BENCH_POSTGRES_DSN`` points at an existing
server instead (a role that may CREATE DATABASE).
"""

from __future__ import annotations

import os
from pathlib import Path


class BenchServer:
    def __init__(self, url_of, stop=None) -> None:
        self._url_of = url_of
        self._stop = stop

    def url(self, db: str) -> str:
        return self._url_of(db)

    def stop(self) -> None:
        if self._stop:
            self._stop()


def start(root: Path) -> BenchServer:
    """Raises ImportError when tests/support/pg_server.py is not there, RuntimeError when no server."""
    from tests.support import pg_server  # ImportError: the test server starter is missing

    dsn = os.environ.get("SYMFONIC_BENCH_POSTGRES_DSN")
    if dsn:
        backend = pg_server.from_dsn(dsn)
        return BenchServer(lambda db: backend.url(db))
    cluster = pg_server.LocalCluster(root)
    cluster.start_or_resume()
    backend = cluster.backend()
    return BenchServer(lambda db: backend.url(db), cluster.shutdown)


def available(root: Path) -> tuple[BenchServer | None, str | None]:
    """The server (its cluster kept under ``root``), or None and why not (printed by the runner as a note)."""
    try:
        return start(root), None
    except ImportError:
        return None, "tests/support/pg_server.py not found: PostgreSQL benchmarks skipped"
    except Exception as exc:  # no binaries, no permission
        return None, f"no PostgreSQL server ({type(exc).__name__}: {exc}): PostgreSQL benchmarks skipped"
