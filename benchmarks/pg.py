"""A PostgreSQL server for the benchmarks, started the way the tests start theirs.

Reuses tests/pg_server.py (``LocalCluster``), but keeps the cluster under benchmarks/out/pg so
the generated stores survive between runs. ``SYMFONIC_BENCH_POSTGRES_DSN`` points at an existing
server instead (a role that may CREATE DATABASE).
"""

from __future__ import annotations

import os
import shutil
import subprocess

from benchmarks.stores import OUT


class BenchServer:
    def __init__(self, url_of, stop=None) -> None:
        self._url_of = url_of
        self._stop = stop

    def url(self, db: str) -> str:
        return self._url_of(db)

    def stop(self) -> None:
        if self._stop:
            self._stop()


def start() -> BenchServer:
    """Raises ImportError when tests/pg_server.py is not there, RuntimeError when no server."""
    from tests import pg_server  # noqa: F401  (ImportError: the test server starter is missing)
    from tests.pg_server import PASSWORD, SUPERUSER, LocalCluster, _from_dsn

    dsn = os.environ.get("SYMFONIC_BENCH_POSTGRES_DSN")
    if dsn:
        backend = _from_dsn(dsn)
        return BenchServer(lambda db: backend.url(db))

    cluster = LocalCluster()
    shutil.rmtree(cluster.root, ignore_errors=True)  # its fresh temp dir is not used
    cluster.root = OUT / "pg"
    cluster.data = cluster.root / "data"
    cluster.log = cluster.root / "server.log"
    if (cluster.data / "PG_VERSION").exists():
        _restart(cluster)
    else:
        shutil.rmtree(cluster.root, ignore_errors=True)
        cluster.root.mkdir(parents=True)
        cluster.start()
        (cluster.root / "port").write_text(str(cluster.port))

    def url_of(db: str) -> str:
        from tests.pg_server import _url

        return _url(SUPERUSER, PASSWORD, "127.0.0.1", cluster.port, db)

    def stop() -> None:
        subprocess.run(
            cluster._cmd(str(cluster.bin / "pg_ctl"), "-D", str(cluster.data), "-m", "fast", "-w", "stop"),
            capture_output=True,
            timeout=120,
        )

    return BenchServer(url_of, stop)


def _restart(cluster) -> None:
    if cluster.user:
        shutil.chown(cluster.root, cluster.user)
    pid = cluster.data / "postmaster.pid"
    if pid.exists():  # left by a killed run: the server may still be up on its old port
        old = (cluster.root / "port").read_text().strip() if (cluster.root / "port").exists() else None
        if old and subprocess.run([str(cluster.bin / "pg_isready"), "-h", "127.0.0.1", "-p", old], capture_output=True).returncode == 0:
            cluster.port = int(old)
            return
        pid.unlink()
    opts = (
        f"-c listen_addresses=127.0.0.1 -c port={cluster.port} -c unix_socket_directories={cluster.root} "
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    )
    cluster._check(str(cluster.bin / "pg_ctl"), "-D", str(cluster.data), "-l", str(cluster.log), "-o", opts, "-w", "-t", "60", "start")
    (cluster.root / "port").write_text(str(cluster.port))


def available() -> tuple[BenchServer | None, str | None]:
    """The server, or None and why not (printed by the runner as a note)."""
    try:
        return start(), None
    except ImportError:
        return None, "tests/pg_server.py not found: PostgreSQL benchmarks skipped"
    except Exception as exc:  # no binaries, no permission
        return None, f"no PostgreSQL server ({type(exc).__name__}: {exc}): PostgreSQL benchmarks skipped"
