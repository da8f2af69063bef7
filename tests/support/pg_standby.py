"""pytest plugin: a real streaming standby of the suite's PostgreSQL cluster (issue #38 item 6).

``pg_standby`` (session scope, started on first use): ``pg_basebackup -R -X stream`` from a
primary cluster of its own (tests/support/pg_server.py's ``LocalCluster``; ``Standby.primary`` is
its backend: a test makes its stores there) into a second data directory, started as a
second cluster on a port of its own, run as the same unprivileged OS user; the fixture waits until
the primary's ``pg_stat_replication`` shows it streaming. Under ``SYMFONIC_REQUIRE_POSTGRES`` a
standby that cannot be had fails its tests (as CI runs them); otherwise they skip, saying why.
A test makes lag by pausing the standby's replay (``pg_wal_replay_pause()``) and resumes it.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.support.pg_server import PASSWORD, REQUIRE_ENV, SUPERUSER, LocalCluster, PostgresServerError, _free_port


@dataclass
class Standby:
    cluster: LocalCluster  # the standby's own data directory, port and log
    primary: Any  # the primary's PostgresBackend

    def connect(self) -> Any:
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.cluster.port, user=SUPERUSER, password=PASSWORD, dbname="postgres",
                               autocommit=True)

    def pause_replay(self, timeout: float = 30) -> None:
        """Pause replay and return once it is paused: pg_wal_replay_pause() only requests it, and
        the standby pauses before the next WAL record it would replay (a write on the primary gives
        it one), so WAL written after this returns is not replayed."""
        with self.connect() as conn:
            conn.execute("SELECT pg_wal_replay_pause()")
            deadline = time.monotonic() + timeout
            while True:
                with self.primary.admin() as primary:
                    primary.execute("CREATE TABLE IF NOT EXISTS symfonic_test_nudge (n int)")
                    primary.execute("INSERT INTO symfonic_test_nudge VALUES (1)")
                    written = primary.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
                time.sleep(0.3)
                paused = conn.execute("SELECT pg_get_wal_replay_pause_state() = 'paused' AND "
                                      "(pg_last_wal_replay_lsn() IS NULL OR pg_last_wal_replay_lsn() < %s::pg_lsn)",
                                      (written,)).fetchone()[0]
                if paused:  # and the write just made is not replayed
                    return
                if time.monotonic() > deadline:
                    raise PostgresServerError("the standby's replay did not pause")

    def resume_replay(self) -> None:
        with self.connect() as conn:
            conn.execute("SELECT pg_wal_replay_resume()")

    def disconnect(self) -> None:
        """Stop the standby (its data kept): the primary's pg_stat_replication loses it."""
        self.cluster.shutdown()

    def reconnect(self, timeout: float = 60) -> None:
        """Start it again and wait until the primary sees it streaming."""
        self.cluster._pg_ctl("start", STANDBY_OPTIONS)
        _wait_streaming(self.primary, self.cluster, timeout)

    def caught_up(self, timeout: float = 60) -> None:
        """Wait until the standby has replayed everything the primary has written so far."""
        with self.primary.admin() as conn:
            target = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
        deadline = time.monotonic() + timeout
        with self.connect() as conn:
            while conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (target,)).fetchone()[0] is not True:
                if time.monotonic() > deadline:
                    raise PostgresServerError("the standby did not catch up")
                time.sleep(0.1)


def start_standby(primary_cluster: LocalCluster, primary: Any) -> Standby:
    """A second cluster streaming from ``primary_cluster``: base backup, -R (standby.signal and
    primary_conninfo), started on a free port; returns once the primary sees it streaming."""
    sb = LocalCluster.__new__(LocalCluster)
    sb.bin, sb.user = primary_cluster.bin, primary_cluster.user
    sb.root = Path(tempfile.mkdtemp(prefix="symfonic-pg-standby-"))
    sb.data, sb.log, sb.port = sb.root / "data", sb.root / "server.log", _free_port()
    if sb.user:
        import shutil

        shutil.chown(sb.root, sb.user)
    os.chmod(sb.root, 0o700)
    env = {**os.environ, "PGPASSWORD": PASSWORD}
    cmd = sb._cmd("env", f"PGPASSWORD={PASSWORD}", str(sb.bin / "pg_basebackup"), "-D", str(sb.data), "-h", "127.0.0.1",
                  "-p", str(primary_cluster.port), "-U", SUPERUSER, "-R", "-X", "stream", "--no-sync")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    if proc.returncode != 0:
        raise PostgresServerError(f"pg_basebackup failed: {proc.stderr.strip() or proc.stdout.strip()}")
    sb._pg_ctl("start", STANDBY_OPTIONS)
    standby = Standby(sb, primary)
    _wait_streaming(primary, sb, 60)
    return standby


STANDBY_OPTIONS = "-c hot_standby=on -c fsync=off"


def _wait_streaming(primary: Any, sb: LocalCluster, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    with primary.admin() as conn:
        while not conn.execute("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'").fetchone()[0]:
            if time.monotonic() > deadline:
                raise PostgresServerError("the standby started but does not stream: " + sb.log.read_text(errors="replace")[-1500:])
            time.sleep(0.2)


@pytest.fixture(scope="session")
def pg_standby(postgres_backend) -> Iterator[Standby]:
    """A primary of its own with its standby: a base backup of the suite's primary copied every
    database the worker had made by then (gigabytes late in a session: minutes of the run)."""
    if getattr(postgres_backend, "cluster", None) is None:
        message = ("no PostgreSQL standby: the PostgreSQL server is not the suite's own cluster (SYMFONIC_TEST_POSTGRES_DSN): "
                   "no standby can be made from it")
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(f"{message} ({REQUIRE_ENV} is set)")
        pytest.skip(message)
    primary: LocalCluster | None = None
    standby = None
    try:
        primary = LocalCluster()
        primary.start()
        standby = start_standby(primary, primary.backend())
    except Exception as exc:  # binaries, permissions, replication refused: say why
        if primary is not None:
            primary.stop()
        message = f"no PostgreSQL standby: {type(exc).__name__}: {exc}"
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(f"{message} ({REQUIRE_ENV} is set)")
        pytest.skip(message)
    try:
        yield standby
    finally:
        try:
            standby.resume_replay()
        except Exception:
            pass
        standby.cluster.stop()
        primary.stop()
