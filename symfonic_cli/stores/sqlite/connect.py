"""SQLite stores written by ``langgraph-checkpoint-sqlite`` (tables ``checkpoints`` and ``writes``).

Inspecting commands open the file through a ``mode=ro`` URI with ``query_only`` on: no DDL,
no write, no file is ever created, and the saver's ``setup()`` is never run."""

from __future__ import annotations

import errno
import os
import sqlite3
import stat

from symfonic_cli.errors import StoreError, UsageError
from symfonic_cli.location import StoreLocation
from symfonic_cli.stores._common import HeldMessages, SupportsWith
from symfonic_cli.stores.activity import ExactActivity
from symfonic_cli.stores.sqlite._common import REQUIRED_TABLES, _store_error, _translate_errors
from symfonic_cli.stores.sqlite.compat import SqliteCompat
from symfonic_cli.stores.sqlite.copy import SqliteCopy
from symfonic_cli.stores.sqlite.rewind import SqliteRewind
from symfonic_cli.stores.sqlite.erase import SqliteErase
from symfonic_cli.stores.sqlite.history import SqliteHistory
from symfonic_cli.stores.sqlite.prune import SqlitePrune
from symfonic_cli.stores.sqlite.usage import SqliteUsage
from symfonic_cli.stores.sqlite.read import SqliteRead
from symfonic_cli.stores.sqlite.search import SqliteSearch
from symfonic_cli.stores.sqlite.state import SqliteState


BUSY_TIMEOUT_MS = 10_000


def _uri_path(path: str) -> str:
    # In an SQLite URI "%" starts an escape, "?" the parameters and "#" a fragment.
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")


def open_store(location: StoreLocation, *, writable: bool = False, init_target: bool = False) -> "SqliteStore":
    path = location.path
    assert path is not None
    if writable and init_target:
        if os.path.lexists(path):
            _require_regular_files(os.path.realpath(path))
        if not _has_data(path):
            refuse_strangers(path, "--to")
        init_sqlite_target(path)  # migrate --init-target: the saver's own setup()
    # Everything below looks at the file the data is in: its -wal and -shm sit beside the target
    # of a symlink, not beside the link.
    real = os.path.realpath(path)
    try:
        os.stat(real)  # exists and reachable, before anything else is asked of it
    except FileNotFoundError:
        raise StoreError(f"no SQLite file at {path}", hint="check --store; symfonic never creates a store") from None
    except OSError as exc:
        raise StoreError(f"{path} is not reachable: {exc.strerror}") from None
    _require_regular_files(real)
    if not os.access(real, os.R_OK) or (writable and not os.access(real, os.W_OK)):
        raise StoreError(f"{path} is not {'writable' if writable and os.access(real, os.R_OK) else 'readable'} by this user")
    private = None
    if writable:
        uri = f"file:{_uri_path(real)}?mode=rw"
    else:
        params = _read_only_params(location, real)
        if params == PRIVATE_COPY:
            private, copied = _private_copy(real)
            uri = f"file:{_uri_path(copied)}?mode=ro"
        else:
            uri = f"file:{_uri_path(real)}?{params}"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        _remove_private(private)
        raise _store_error(location, exc) from None
    store = SqliteStore(location, conn, writable=writable)
    store.private_copy = private
    store.file = real
    try:
        store._check_schema()
    except BaseException:
        store.close()
        raise
    return store


_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _require_regular_files(path: str) -> None:
    """The database and the files SQLite opens beside it (a FIFO there would block it forever)."""
    for name in (path, path + "-wal", path + "-shm", path + "-journal"):
        try:
            st = os.stat(name)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StoreError(f"{name} is not reachable: {exc.strerror}") from None
        _require_regular(name, st)


def _require_regular(path: str, st: os.stat_result) -> None:
    """Exit 4 at once for anything but a regular file, before it is opened (a FIFO would block)."""
    if stat.S_ISREG(st.st_mode):
        return
    what = next((name for test, name in _FILE_KINDS if test(st.st_mode)), "not a regular file")
    raise StoreError(f"{path} is {what}, not an SQLite file")


PRIVATE_COPY = "private-copy"


SHM_DMS_BYTE = 128  # SQLite's "dead man switch" lock in the -shm: every connection holds it shared


def _wal_in_use(shm: str) -> bool | None:
    """Whether a live process has the WAL open: a read lock on the -shm's DMS byte, which every
    SQLite connection holds while it has the database open (unix VFS). None where we cannot tell."""
    import struct
    import sys

    try:
        import fcntl
    except ImportError:  # Windows
        return None
    if sys.platform.startswith("linux"):
        layout = "hhqqi4x"  # l_type, l_whence, l_start, l_len, l_pid
        query = struct.pack(layout, fcntl.F_WRLCK, os.SEEK_SET, SHM_DMS_BYTE, 1, 0)
    elif sys.platform == "darwin" or "bsd" in sys.platform:
        layout = "qqihh"  # l_start, l_len, l_pid, l_type, l_whence
        query = struct.pack(layout, SHM_DMS_BYTE, 1, 0, fcntl.F_WRLCK, os.SEEK_SET)
    else:
        return None
    try:
        fd = os.open(shm, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        answer = struct.unpack(layout, fcntl.fcntl(fd, fcntl.F_GETLK, query))
    except OSError:
        return None
    finally:
        os.close(fd)
    lock_type = answer[0] if layout.startswith("hh") else answer[3]
    return lock_type != fcntl.F_UNLCK


def _private_copy(path: str) -> tuple[str, str]:
    """Copy the database and its -wal into a private temporary directory; (directory, copy).

    A WAL database whose application died must not be opened in place: the first connection
    rebuilds the -shm index from the WAL, rewriting that file. The copy is rebuilt instead.
    """
    import shutil
    import tempfile

    directory = tempfile.mkdtemp(prefix="symfonic-")
    copy = os.path.join(directory, "store.db")
    try:
        shutil.copyfile(path, copy)
        shutil.copyfile(path + "-wal", copy + "-wal")
    except OSError as exc:
        _remove_private(directory)
        raise StoreError(
            f"{path} was left by a crashed application (its -wal is not in use) and must be read "
            f"through a private copy, which failed: {exc.strerror}",
            hint="free space in the temporary directory (TMPDIR), or let the application open the store once",
        ) from None
    return directory, copy


def _remove_private(directory: str | None) -> None:
    if directory:
        import shutil

        shutil.rmtree(directory, ignore_errors=True)


def _read_only_params(location: StoreLocation, real: str) -> str:
    """URI parameters that read without creating or changing any file.

    A ``mode=ro`` connection to a WAL database creates the ``-wal``/``-shm`` files when they are
    missing. When they exist (an application has the database open) we share them and see its
    commits; when they do not, nothing is writing, and ``immutable=1`` reads the file as it is.
    """
    path = location.path
    try:
        with open(real, "rb") as fh:
            header = fh.read(100)
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from None
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        if not header:
            raise StoreError(f"{path} is empty, not an SQLite database")
        raise StoreError(f"{path} is not an SQLite database")
    wal_mode = header[18] == 2 or header[19] == 2
    if not wal_mode:
        return "mode=ro"
    wal, shm = f"{real}-wal", f"{real}-shm"
    if os.path.exists(wal) and os.path.exists(shm):
        if _wal_in_use(shm) is False:
            # Left by a crashed (or killed) application: opening it in place would rebuild,
            # that is rewrite, the -shm. An empty log holds nothing: read the file as it is;
            # else read a private copy of the database and its log.
            return "mode=ro&immutable=1" if os.path.getsize(wal) == 0 else PRIVATE_COPY
        return "mode=ro"  # an application has it open: share its index and see its commits
    if os.path.exists(wal) and os.path.getsize(wal) > 0:
        raise StoreError(
            f"{path} has a write-ahead log without its -shm index (left by a crash)",
            hint="let the application open it once, or copy the files and read the copy",
        )
    return "mode=ro&immutable=1"


SIDE_FILES = ("-wal", "-shm", "-journal")  # what SQLite keeps beside a database file


def _has_data(path: str) -> bool:
    try:
        return os.stat(path).st_size > 0
    except OSError:
        return False


def refuse_strangers(path: str, what: str) -> None:
    """Before a command creates an SQLite file at ``path`` (``symfonic demo``, ``migrate
    --init-target``): SQLite takes a -wal or -journal it finds beside a new, empty database for its
    own and deletes it, and uses a -shm it finds. One there that the command did not write is
    refused (exit 2, naming it), as is a name too long for the files SQLite writes beside it."""
    folder = os.path.dirname(os.path.abspath(path))
    for suffix in SIDE_FILES:
        if os.path.lexists(path + suffix):
            raise UsageError(f"{path}{suffix} already exists beside {what} {path}: SQLite would take it for the new store's "
                             "and delete it; nothing was written", hint="move it away, or choose another path")
    try:
        longest = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        longest = 255
    name = os.fsencode(os.path.basename(path))
    if len(name) + max(len(s) for s in SIDE_FILES) > longest:
        raise UsageError(f"{what} {path}: the name is {len(name)} bytes, too long for the -journal file SQLite writes "
                         f"beside it (names here take at most {longest} bytes)", hint="choose a shorter name")


def create_new_file(path: str, what: str) -> None:
    """The empty file a new SQLite store is written into, created here (O_EXCL: never one that
    exists) so that a folder it cannot be created in is one line (exit 4) before SQLite is asked."""
    refuse_strangers(path, what)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as exc:
        if exc.errno == errno.EEXIST:
            raise UsageError(f"{path} already exists; nothing was written", hint="choose a new path") from None
        raise StoreError(f"cannot create {what} {path}: {exc.strerror}; nothing was written") from None
    os.close(fd)


def remove_new_file(path: str) -> None:
    """Undo ``create_new_file`` after a failed write: the file and what SQLite wrote beside it
    (refuse_strangers made sure none of those was there before)."""
    for suffix in ("", *SIDE_FILES):
        try:
            os.unlink(path + suffix)
        except OSError:
            pass


def init_sqlite_target(path: str) -> None:
    """``--init-target``: the SqliteSaver's own setup() (creates the file and its tables)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    try:
        conn = sqlite3.connect(str(path), check_same_thread=False)
        try:
            SqliteSaver(conn).setup()
            conn.commit()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise _store_error(StoreLocation("sqlite", path, path, None, {}), exc) from None


class SqliteStore(ExactActivity, SqliteRead, SqliteSearch, SqliteHistory, SqliteCompat, SqliteState, SqliteErase, SqliteRewind, SqliteCopy, SqlitePrune, SqliteUsage, HeldMessages, SupportsWith):
    kind = "sqlite"

    def __init__(self, location: StoreLocation, conn: sqlite3.Connection, *, writable: bool) -> None:
        self.location = location
        self.conn = conn
        self.writable = writable
        self.has_task_path = True
        self.file = location.path  # the resolved file (open_store sets it)
        self._blob_keys: bool | None = None
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not writable:
            conn.execute("PRAGMA query_only = ON")

    private_copy: str | None = None  # the temporary directory of a private copy, removed on close

    def close(self) -> None:
        try:
            self.release_run_lock()
            self.conn.close()
        finally:
            self.close_file_lock()
            _remove_private(self.private_copy)
            self.private_copy = None

    @_translate_errors
    def _check_schema(self) -> None:
        tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in REQUIRED_TABLES if t not in tables]
        if missing:
            raise StoreError(
                f"{self.location.path} is an SQLite file but not a LangGraph checkpoint store "
                f"(missing table{'s' if len(missing) > 1 else ''}: {', '.join(missing)})"
            )
        cols = {r[1] for r in self.conn.execute("PRAGMA table_info(writes)")}
        self.has_task_path = "task_path" in cols
        self.tables = sorted(tables)
        # A key range compares stored bytes: in code point order only when the text is UTF-8.
        self.utf8 = self.conn.execute("PRAGMA encoding").fetchone()[0] == "UTF-8"
        # Any declared collation (the saver declares none) takes the exact form of _key_is.
        self.keys_folded = any("COLLATE" in (sql or "").upper() for (sql,) in self.conn.execute(
            "SELECT sql FROM sqlite_master WHERE tbl_name IN ('checkpoints', 'writes')"))
