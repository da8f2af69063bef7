"""pytest plugin: a real PostgreSQL server for the tests, and the PostgreSQL test backend.

``SYMFONIC_TEST_POSTGRES_DSN`` (a role allowed to CREATE DATABASE and CREATE ROLE) is used when
set. Otherwise a throwaway cluster is made with the installed ``initdb``/``pg_ctl`` in a temporary
directory on a free loopback port, password-authenticated (so masking is tested against a real
password), run as an unprivileged OS user when we are root (the server refuses root), and
stopped at the end of the session. A server that cannot be had fails the run under
``SYMFONIC_REQUIRE_POSTGRES`` and skips the PostgreSQL tests otherwise.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator
from urllib.parse import quote

import pytest

from tests.support import backends
from tests.support.scenarios import write_scenarios

DSN_ENV = "SYMFONIC_TEST_POSTGRES_DSN"
REQUIRE_ENV = "SYMFONIC_REQUIRE_POSTGRES"
OS_USER = "symfonic-pg"
SUPERUSER = "symfonic_admin"
# Characters that need URL quoting, so masking and scrubbing are tested on a real password.
PASSWORD = "pg-S3cret:w@rd%4711"
MASTER_DB = "symfonic_master"
EMPTY_DB = "symfonic_empty"
# Server settings: speed over durability for the suite; benchmarks that time writes ask for DURABLE.
FAST = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
DURABLE = "-c fsync=on -c synchronous_commit=on -c full_page_writes=on"
LOG_WRITES = "-c log_statement=mod -c log_line_prefix='%m [%p] app=%a db=%d user=%u '"


class PostgresServerError(RuntimeError):
    pass


def _bin_dir() -> Path:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
    )
    for d in reversed(found):
        if (Path(d) / "initdb").exists() and (Path(d) / "pg_ctl").exists():
            return Path(d)
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return Path(initdb).parent
    raise PostgresServerError("initdb/pg_ctl not found (install the PostgreSQL server binaries)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_as_user() -> str | None:
    """The OS user to run the server as (None: ourselves)."""
    if os.geteuid() != 0:
        return None
    try:
        import pwd

        pwd.getpwnam(OS_USER)
        return OS_USER
    except KeyError:
        pass
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", OS_USER],
        capture_output=True,
        text=True,
    )
    try:  # made by us, or by another xdist worker at the same moment
        pwd.getpwnam(OS_USER)
        return OS_USER
    except KeyError:
        return "nobody"


class LocalCluster:
    """A throwaway cluster: initdb, start, stop, remove."""

    def __init__(self, root: Path | None = None) -> None:
        """A throwaway temp dir, or ``root`` (kept between runs: see ``start_or_resume``)."""
        self.bin = _bin_dir()
        self.user = _run_as_user()
        self.root = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="symfonic-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = _free_port()

    def options(self, durability: str = FAST) -> str:
        """The ``pg_ctl -o`` string: listen on 127.0.0.1 and this cluster's socket dir, plus ``durability``."""
        return f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.root} {durability}"

    def backend(self) -> PostgresBackend:
        """A backend that connects to this cluster as its superuser."""
        return PostgresBackend(
            user=SUPERUSER, password=PASSWORD, host="127.0.0.1", port=self.port, admin_db="postgres", log=self.log
        )

    def _cmd(self, *args: str) -> list[str]:
        return (["runuser", "-u", self.user, "--"] if self.user else []) + list(args)

    def _check(self, *args: str, timeout: float = 60) -> None:
        proc = subprocess.run(self._cmd(*args), capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            tail = ""
            if self.log.exists():
                tail = self.log.read_text(errors="replace")[-2000:]
            raise PostgresServerError(f"{args[0]} failed: {proc.stderr.strip() or proc.stdout.strip()} {tail}")

    def start(self) -> None:
        pwfile = self.root / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.user:
            shutil.chown(self.root, self.user)
            shutil.chown(pwfile, self.user)
        os.chmod(self.root, 0o700)
        self._check(
            str(self.bin / "initdb"), "-D", str(self.data), "-U", SUPERUSER, f"--pwfile={pwfile}",
            "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync",
        )
        pwfile.unlink()
        # log_statement lets tests prove no DDL or write ever reaches the server.
        self._pg_ctl("start", f"{FAST} {LOG_WRITES}")

    def _pg_ctl(self, action: str, durability: str) -> None:
        self._check(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", self.options(durability),
            "-w", "-t", "60", action,
        )

    def restart(self, durability: str) -> None:
        """Restart with other settings (a benchmark that measures writes wants ``DURABLE``)."""
        self._pg_ctl("restart", durability)

    def start_or_resume(self) -> None:
        """Start the cluster kept in ``root``: initdb on first use, else reuse its data directory.

        A server left running by a killed run is adopted on its old port.
        """
        port_file = self.root / "port"
        if not (self.data / "PG_VERSION").exists():
            shutil.rmtree(self.root, ignore_errors=True)
            self.root.mkdir(parents=True)
            self.start()
        else:
            if self.user:
                shutil.chown(self.root, self.user)
            pid = self.data / "postmaster.pid"
            if pid.exists():
                old = port_file.read_text().strip() if port_file.exists() else None
                ready = [str(self.bin / "pg_isready"), "-h", "127.0.0.1", "-p", old or ""]
                if old and subprocess.run(ready, capture_output=True).returncode == 0:
                    self.port = int(old)
                    return
                pid.unlink()
            self._pg_ctl("start", FAST)
        port_file.write_text(str(self.port))

    def shutdown(self) -> None:
        """Stop the server cleanly and keep its data (``stop`` also removes the directory)."""
        subprocess.run(
            self._cmd(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"),
            capture_output=True,
            timeout=120,
        )

    def stop(self) -> None:
        try:
            subprocess.run(
                self._cmd(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"),
                capture_output=True,
                timeout=60,
            )
        finally:
            _remove_later(self.root)


def _remove_later(root: Path) -> None:
    """Remove a stopped cluster's folder in a process of its own: a cluster that held a test
    session's databases is gigabytes of small files, and the session need not wait for them."""
    try:
        subprocess.Popen(["rm", "-rf", "--", str(root)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        shutil.rmtree(root, ignore_errors=True)


def _url(user: str, password: str | None, host: str, port: int | str, db: str, query: str = "") -> str:
    auth = quote(user, safe="") + (f":{quote(password, safe='')}" if password else "")
    return f"postgresql://{auth}@{host}:{port}/{quote(db, safe='')}" + (f"?{query}" if query else "")


def case_twins_under_a_folding_collation(backend) -> str:
    """A new store of ``backend`` (PostgreSQL) holding ``acme:_:bob`` and ``ACME:_:BOB``, written by
    the real graph, whose thread_id columns were then altered to a nondeterministic
    (case-insensitive) ICU collation: "=" folds case there, as on a database set up that way."""
    import psycopg

    from tests.support.scenarios import long_thread

    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        for key in ("acme:_:bob", "ACME:_:BOB"):
            long_thread(saver, key, 1)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)")
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            conn.execute(f"ALTER TABLE {table} ALTER COLUMN thread_id TYPE text COLLATE ci")
        assert conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()[0] == 1  # "=" folds now
    return url


class PostgresBackend:
    """Makes new databases on the test server (copies of a master written by the real PostgresSaver)."""

    kind = "postgres"

    def __init__(self, *, user: str, password: str | None, host: str, port: int | str, admin_db: str, log: Path | None = None) -> None:
        self.user, self.password, self.host, self.port = user, password, host, port
        self.admin_db = admin_db
        self.log = log  # the server log (log_statement=mod) when we run the server ourselves
        self.created: list[str] = []
        self.roles: list[str] = []
        self._templates_ready = False
        self.master = f"{MASTER_DB}_{uuid.uuid4().hex[:8]}"
        self.empty = f"{EMPTY_DB}_{uuid.uuid4().hex[:8]}"

    def url(self, db: str, *, user: str | None = None, password: str | None = None, query: str = "") -> str:
        if user is None:
            user, password = self.user, self.password
        return _url(user, password, self.host, self.port, db, query)

    def db_of(self, url: str) -> str:
        from psycopg.conninfo import conninfo_to_dict

        return str(conninfo_to_dict(url)["dbname"])

    @contextmanager
    def admin(self, db: str | None = None):
        """An autocommit superuser connection to ``db`` (default: the admin database)."""
        import psycopg

        with psycopg.connect(self.url(db or self.admin_db), autocommit=True) as conn:
            yield conn

    def _create(self, name: str, template: str | None = None) -> None:
        from psycopg import sql

        stmt = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if template:
            stmt = sql.SQL("CREATE DATABASE {} TEMPLATE {} STRATEGY FILE_COPY").format(
                sql.Identifier(name), sql.Identifier(template)
            )
        with self.admin() as conn:
            conn.execute(stmt)
        self.created.append(name)

    def create_role(self, db: str, password: str, *, grant: tuple[str, ...] = ("SELECT",), prefix: str = "reader") -> str:
        """A new login role with only ``grant`` on the saver's four tables of ``db``; its URL."""
        from psycopg import sql

        role = f"{prefix}_{uuid.uuid4().hex[:8]}"
        with self.admin(db) as conn:
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(role), sql.Literal(password)))
            self.roles.append(role)
            conn.execute(
                sql.SQL("GRANT {} ON checkpoints, checkpoint_blobs, checkpoint_writes, checkpoint_migrations TO {}").format(
                    sql.SQL(", ").join(sql.SQL(g) for g in grant), sql.Identifier(role)
                )
            )
        return self.url(db, user=role, password=password)

    def _ensure_templates(self) -> None:
        if self._templates_ready:
            return
        self._create(self.empty)
        with self.saver(self.url(self.empty)) as saver:
            saver.setup()
        self._create(self.master, self.empty)
        with self.saver(self.url(self.master)) as saver:
            write_scenarios(saver)
        self._templates_ready = True

    def new_store(self, *, scenarios: bool = True, only: list[str] | None = None) -> str:
        self._ensure_templates()
        name = f"symfonic_t_{uuid.uuid4().hex[:12]}"
        if scenarios and only is None:
            self._create(name, self.master)
            return self.url(name)
        self._create(name, self.empty)
        url = self.url(name)
        if scenarios:
            with self.saver(url) as saver:
                write_scenarios(saver, only)
        return url

    @contextmanager
    def saver(self, url: str) -> Iterator[object]:
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(url) as saver:
            yield saver

    def drop_all(self) -> None:
        from psycopg import sql

        with self.admin() as conn:
            for name in reversed(self.created):
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            for role in self.roles:  # roles are cluster-wide: they outlive the databases
                conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


def from_dsn(dsn: str) -> PostgresBackend:
    """A backend on an existing server (``SYMFONIC_TEST_POSTGRES_DSN``: a role that may CREATE DATABASE)."""
    from psycopg.conninfo import conninfo_to_dict

    params = conninfo_to_dict(dsn)
    return PostgresBackend(
        user=str(params.get("user") or os.environ.get("PGUSER") or "postgres"),
        password=str(params["password"]) if params.get("password") else os.environ.get("PGPASSWORD"),
        host=str(params.get("host") or "127.0.0.1"),
        port=params.get("port") or 5432,
        admin_db=str(params.get("dbname") or "postgres"),
    )


@pytest.fixture(scope="session")
def postgres_backend():
    """The PostgreSQL test backend, registered with tests.support.backends (server started on first use)."""
    cluster: LocalCluster | None = None
    try:
        dsn = os.environ.get(DSN_ENV)
        if dsn:
            backend = from_dsn(dsn)
        else:
            cluster = LocalCluster()
            cluster.start()
            backend = cluster.backend()
            backend.cluster = cluster  # a standby is made from it (tests/support/pg_standby.py)
        with backend.admin() as conn:
            conn.execute("SELECT 1")
    except Exception as exc:  # no binaries, no permission, server down: say why
        if cluster is not None:
            cluster.stop()
        message = f"no PostgreSQL test server: {type(exc).__name__}: {exc}"
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(f"{message} ({REQUIRE_ENV} is set)")
        pytest.skip(message)
    backends.register(backend)
    try:
        yield backend
    finally:
        backends._registry.pop("postgres", None)
        if cluster is not None:
            cluster.stop()
        else:
            try:
                backend.drop_all()
            except Exception:
                pass
