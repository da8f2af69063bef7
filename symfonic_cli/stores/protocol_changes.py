"""The protocol's sections that change a store: erase, migrate's copy and prune, one class per
section (``stores/<kind>/erase.py``, ``copy.py``, ``prune.py``); ``stores/protocol.py`` holds the
reading sections and ``Store``, every section together. Only type checkers and readers import it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from datetime import datetime

    from symfonic_cli.model.copy import DecodedCheckpoint, DecodedThread, DecodedWrite, RawRow, ThreadExport
    from symfonic_cli.model.erase import ExtraTable, ThreadErasePlan
    from symfonic_cli.model.prune import PruneDecision, ThreadPrunePlan
    from symfonic_cli.model.run_state import LeanCheckpoint


class EraseProtocol(Protocol):
    """thread erase (stores/<kind>/erase.py)."""

    # -- erase (only on a store opened with writable=True; see ExtraTable, ThreadErasePlan)
    #
    # The cascade of a thread, in delete order: each declared extra table, then the saver's
    # tables: SQLite ``writes``, ``checkpoints``; PostgreSQL ``checkpoint_writes``,
    # ``checkpoint_blobs``, ``checkpoints``; MongoDB the writes collection, then the checkpoints
    # collection. Every namespace (subgraph namespaces included) is part of the thread. Table
    # names in the returned dicts are the names as the operator knows them (the configured
    # collection names on MongoDB, unqualified saver table names on PostgreSQL, the declared
    # ``ExtraTable.name`` for extras). Driver errors become StoreError (exit 4), passwords scrubbed.
    #
    # ``erase_plans`` and ``erase_verified`` are what erase/run.py and erase/sweep.py call; SQLite and
    # MongoDB take them from stores/_common.PerThreadErase (one thread at a time), PostgreSQL
    # batches them (one statement for a batch's plans, two round trips per thread).

    def store_identity(self) -> dict[str, Any]:
        """What selects this store's data, for a receipt's "same store" (an erasure recorded against
        another identity never makes a key ``already-erased``): the kind; a SQLite file's resolved
        absolute path; PostgreSQL's host, port and database as libpq resolved them and the schema;
        MongoDB's hosts, database and collections. No user name and no password."""
        ...

    def take_run_lock(self, operation: str) -> str | None:
        """Take the store's run lock for ``operation`` ("erase", "prune") until ``release_run_lock`` or
        ``close``: one erase or prune at a time per store (the identity receipts record). SQLite: a
        lock file beside the store (flock); PostgreSQL: a session advisory lock per database and
        schema; MongoDB: a lock document with the holder and an expiry, renewed while held. None when
        taken, else who holds it (read from the store: escape it where it is shown)."""
        ...

    def release_run_lock(self) -> None:
        """Let go of the run lock (nothing when not held); ``close`` does it too."""
        ...

    def replica_lag(self) -> tuple[float, str] | None:
        """--max-replica-lag: the most lagging standby's replay lag in seconds and its name, read
        from the primary (PostgreSQL pg_stat_replication; MongoDB replSetGetStatus); None without
        standbys, or where the server reports none (SQLite, a standalone MongoDB server)."""
        ...

    def set_lock_timeout(self, seconds: float) -> None:
        """Bound every wait for a lock from now on to ``seconds`` (erase and prune's --lock-timeout):
        SQLite's busy timeout, PostgreSQL's ``lock_timeout`` of the session, MongoDB ``maxTimeMS`` on
        each operation of a thread's transaction and the retries of its transient conflicts. A
        statement that gives up raises ThreadBusy (its transaction rolled back, nothing changed)."""
        ...

    def erase_prepare(self, extra: tuple[ExtraTable, ...], *, dry_run: bool = False) -> list[str]:
        """Check, before anything is deleted, that this session can erase; set it up for erasing.

        With ``dry_run`` (the store may be open read-only) make the same checks as a writable
        session would meet, and change nothing: no option set, no lock taken, no file created.

        Raises StoreError (exit 4) when the store is read-only (file mode, read-only replica,
        ``default_transaction_read_only``), the role lacks DELETE on any cascade table (PostgreSQL:
        ``has_table_privilege(..., 'DELETE')``), or a declared extra table/column does not exist.
        Sets per-session options: SQLite ``PRAGMA secure_delete = ON`` (freed pages are zeroed) and
        a busy timeout so an application writing other threads of the file is waited for, not
        failed. Returns notes for the receipt about how erasing works on this store (MongoDB
        without multi-document transactions: "deleted in a fixed order, writes first, checkpoints
        last; not atomic"), [] when there is nothing to say.
        """
        ...

    def thread_keys_with_prefix(self, prefix: str, *, limit: int | None = None) -> list[str]:
        """Every distinct thread key starting with ``prefix`` (bytewise), sorted, found in the
        checkpoints OR the writes table/collection (a thread may hold only pending writes).
        With ``limit`` (TAB completion), at most that many of them, read by the key index.
        Exact whatever the store's text encoding or collation (SQLite UTF-16, PostgreSQL ICU): a
        key range only where it is exact, else a comparison of the first characters."""
        ...

    def erase_plan(self, key: str, extra: tuple[ExtraTable, ...]) -> ThreadErasePlan:
        """Per cascade table the number of rows of ``key`` that erase_thread would delete, plus
        the first and last checkpoint id (all namespaces). Counting only: indexed, no blob read."""
        ...

    def erase_thread(
        self,
        key: str,
        extra: tuple[ExtraTable, ...],
        *,
        between: Callable[[str], None] | None = None,
        expected: dict[str, int] | None = None,
        idle_before: str | None = None,
    ) -> dict[str, int]:
        """Delete every row of ``key`` from every cascade table in ONE transaction; rows deleted per
        table (same keys and order as ``erase_plan().rows``).

        One indexed ``DELETE ... WHERE thread_id = ?`` per table (no per-row round trips). SQLite:
        ``BEGIN IMMEDIATE`` ... ``COMMIT``; PostgreSQL: one transaction; MongoDB: a multi-document
        transaction when the server supports it, otherwise the fixed order alone. Any error rolls
        back and raises (StoreError for driver errors): the thread stays whole. ``between(table)``
        is called inside the transaction after each table's delete (before COMMIT); the erase
        tests kill the process from there to prove the transaction. A thread with nothing left
        returns all zeros, not an error (erasing is idempotent; a concurrent eraser won the race).
        ``expected`` (the plan's rows): before the commit, rows deleted that differ from it make
        the thread roll back with StoreError "changed since the plan" (model/erase.py: check_against_plan).
        ``idle_before`` (a retention sweep's checkpoint-id bound): first, inside the transaction,
        the thread's last activity by instant (its greatest ordered id, the id or ``ts`` of every
        other checkpoint) must still be before the bound's instant, and no checkpoint undatable,
        else ThreadActiveError and nothing deleted (model/erase.py: check_still_idle).
        """
        ...

    def erase_plans(self, keys: list[str], extra: tuple[ExtraTable, ...]) -> list[ThreadErasePlan]:
        """``erase_plan`` of each key, in order (a key with no rows: an all-zero plan)."""
        ...

    def erase_verified(
        self, key: str, extra: tuple[ExtraTable, ...], *, expected: dict[str, int] | None = None, idle_before: str | None = None
    ) -> tuple[dict[str, int], dict[str, int]]:
        """``erase_thread`` then ``remaining_rows``, with their guarantees: (rows deleted, rows remaining)."""
        ...

    def remaining_rows(self, key: str, extra: tuple[ExtraTable, ...]) -> dict[str, int]:
        """After commit, a fresh count of the rows of ``key`` still in each cascade table (same keys
        as ``erase_plan().rows``); all zeros means the erase is verified."""
        ...

    def erase_finish(self, *, vacuum: bool) -> list[str]:
        """After the last thread: leave no erased text behind, as far as the store can; notes for
        the receipt. SQLite: ``PRAGMA wal_checkpoint(TRUNCATE)`` (erased text leaves the -wal, whose
        pages secure_delete zeroed) and with ``vacuum`` a ``VACUUM`` (file rewritten, space given
        back). PostgreSQL: with ``vacuum``, ``VACUUM`` each cascade table touched (outside a
        transaction). MongoDB: nothing to do. Raises StoreError if the store refuses (e.g. a
        checkpoint blocked by a reader, reported as a note rather than an error where harmless).
        """
        ...


class CopyProtocol(Protocol):
    """migrate (stores/<kind>/copy.py)."""

    # -- migrate (``symfonic migrate``; see RawRow, ThreadExport, DecodedThread in model/copy.py)
    #
    # Opening a target: ``open_store(location, writable=True)`` requires the saver's tables;
    # ``open_store(location, writable=True, init_target=True)`` first runs the target saver's own
    # ``setup()`` (SQLite: creates the file when missing), then checks the schema as usual.

    def export_thread(self, key: str) -> ThreadExport:
        """Every stored row of thread ``key`` in every table and namespace, raw (see RawRow).
        Empty ``rows`` when the thread does not exist. Read-only; works on read-only stores."""
        ...

    def import_rows(self, key: str, rows: list[RawRow]) -> None:
        """Same-kind copy: insert exactly ``rows`` (from another store's ``export_thread``) for
        thread ``key``, bytes as they are, in ONE transaction. Rows are plain inserts: if any
        ``(table, key)`` already exists for the thread, roll back and raise MigrationConflict
        (the caller has already left out identical rows). Call
        ``migrate_fault_point("before-commit")`` after the last row and before the commit.
        Writable stores only."""
        ...

    def decoded_thread(self, key: str) -> DecodedThread:
        """Thread ``key`` decoded strictly (see DecodedThread); empty lists when absent.
        Read-only; used for cross-kind copies, conflict checks and verification."""
        ...

    def import_decoded(
        self, key: str, checkpoints: list[DecodedCheckpoint], writes: list[DecodedWrite],
        new_versions: list[dict[str, Any]],
    ) -> None:
        """Cross-kind copy: write ``checkpoints`` (ascending, with ``new_versions[i]`` for
        ``checkpoints[i]``, from ``new_versions_in_order`` over the WHOLE source thread) and
        ``writes`` through the target saver's OWN writing code, in ONE transaction where the
        store supports it (MongoDB without replica set: documented best effort, checkpoints
        after their writes so a partial thread is never visible as complete):

        - ``saver.put({"configurable": {"thread_id": key, "checkpoint_ns": ns,
          "checkpoint_id": parent_checkpoint_id}}, checkpoint, metadata, new_versions[i])``
          (pass no other config keys: the saver copies config keys into metadata);
        - ``saver.put_writes(config_of_checkpoint, [(channel, value), ...], task_id, task_path)``
          once per (ns, checkpoint_id, task_id, task_path), values placed so that the saver's
          ``WRITES_IDX_MAP.get(channel, position)`` gives back each stored ``idx``; use
          ``symfonic_cli.migrate.copy.write_batches(writes)`` which does exactly that.

        Before writing, inside the transaction, check that none of the checkpoint ids and write
        keys exist yet for the thread; if one does, roll back and raise MigrationConflict. Call
        ``migrate_fault_point("before-commit")`` before the commit. Writable stores only."""
        ...


class PruneProtocol(Protocol):
    """thread prune (stores/<kind>/prune.py, on stores/_prune.py's RulePrune: the keep rules of
    model/prune.py, PostgresSaver.prune's, run on each backend's few primitives).

    Tables in the ``rows`` dicts, in delete order: SQLite ``writes``, ``checkpoints``; PostgreSQL
    ``checkpoint_writes``, ``checkpoint_blobs``, ``checkpoints``; MongoDB the configured writes and
    checkpoints collections. Bytes as the database measures them (as ``read_run_rows``'s size)."""

    def prune_prepare(self, *, dry_run: bool = False) -> list[str]:
        """Before anything is deleted: erase_prepare's checks (writable, DELETE privilege, no triggers;
        PostgreSQL also UPDATE on checkpoints, for the parent pointers); a dry run makes them too.
        StoreError (exit 4) otherwise. Notes for the receipt."""
        ...

    def prune_plan(self, key: str, *, keep: int = 1, newer_than: datetime | None = None, keep_branches: bool = False, times: bool = True) -> ThreadPrunePlan:
        """What pruning ``key`` would delete now (rows, bytes, parents detached, DeltaChannel
        ancestors kept, a skip reason, with ``times`` the messages whose transcript time moves). Read-only."""
        ...

    def prune_plans(self, keys: list[str], *, keep: int = 1, newer_than: datetime | None = None, keep_branches: bool = False, times: bool = True,
                    reader: Callable[[str, Any], object] | None = None) -> list[ThreadPrunePlan]:
        """``prune_plan`` of each key; ``reader(key, message states)`` is called with a thread's
        message states where the plan reads them anyway (its result the plan's ``read``), else not."""
        ...

    def prune_decision(self, key: str, *, keep: int = 1, newer_than: datetime | None = None, keep_branches: bool = False) -> PruneDecision:
        """The keep rules' decision for ``key`` now: the checkpoints kept and deleted per namespace. Read-only."""
        ...

    def prune_thread(self, key: str, *, keep: int = 1, newer_than: datetime | None = None, keep_branches: bool = False,
                     expected: dict[str, int] | None = None) -> tuple[dict[str, int], int]:
        """Prune ``key`` in ONE transaction on one snapshot, the rules decided on that snapshot, the
        rows deleted compared with ``expected`` and the kept state (what get_tuple reads of every kept
        checkpoint: checkpoint, metadata, pending writes, blobs) compared before and after the deletes,
        before the commit: a difference rolls back (StoreError). ThreadSkipped: nothing changed.
        Returns (rows deleted, checkpoints left with no parent)."""
        ...

    def prune_remaining(self, key: str, *, keep: int = 1, newer_than: datetime | None = None, keep_branches: bool = False) -> int:
        """After the commit: the checkpoints a prune would still delete (0 means verified)."""
        ...

    def prune_verified(self, key: str, *, keep: int = 1, newer_than: datetime | None = None, keep_branches: bool = False,
                       expected: dict[str, int] | None = None,
                       after_commit: Callable[[], None] | None = None) -> tuple[dict[str, int], int, int]:
        """prune_thread and a fresh plan's verification (PostgreSQL: inside the transaction, after the
        deletes): (rows deleted, checkpoints left with no parent, checkpoints still to prune).
        ``after_commit`` (a test's fault hook) is called right after the commit."""
        ...

    def prune_piece(self, key: str, *, keep: int = 1, newer_than: datetime | None = None, keep_branches: bool = False,
                    expected: dict[str, int] | None = None, piece: int | None = None,
                    after_commit: Callable[[], None] | None = None) -> tuple[dict[str, int], int, int, int]:
        """prune_verified of at most ``piece`` checkpoints, oldest first (model/prune.py piece_of), in
        one transaction with the same checks: (rows deleted, checkpoints left with no parent,
        checkpoints still to prune beyond the later pieces' (0: verified), checkpoints left for later
        pieces (0: the thread is done)). ``expected`` is compared only when the whole prune fits."""
        ...

    def compact_check(self) -> list[str]:
        """``--compact``, before anything is deleted: refuse (StoreError) what cannot work (SQLite: less
        free disk than the file); notes for the plan (locks taken, what the space becomes)."""
        ...

    def compact(self) -> tuple[dict[str, int], dict[str, int], list[str]]:
        """After the last thread: SQLite ``wal_checkpoint(TRUNCATE)`` and ``VACUUM``; PostgreSQL
        ``VACUUM (ANALYZE)`` of the three tables; MongoDB ``compact`` where the server allows it.
        (bytes before, bytes after, notes)."""
        ...


class RewindProtocol(Protocol):
    """thread rewind (stores/<kind>/rewind.py, on stores/_rewind.py)."""

    def rewind_target(self, key: str, checkpoint_id: str) -> LeanCheckpoint | None:
        """Root checkpoint ``checkpoint_id`` as a LeanCheckpoint (version maps, the channels holding a
        value, pending Sends; no stored class built): what a copy of it runs next. None: no such
        root checkpoint. Read-only."""
        ...

    def rewind_thread(self, key: str, target_id: str, head_id: str, *,
                      before_commit: Callable[[], None] | None = None) -> str:
        """In ONE transaction: check that the root namespace's newest checkpoint (as the saver orders
        them) is still ``head_id`` (else HeadMoved, exit 13, nothing written), then put a copy of root
        checkpoint ``target_id`` exactly as LangGraph's ``update_state(config, None, as_node="__copy__")``
        does, through the kind's own saver (stores/_rewind.copy_as_langgraph): one inserted checkpoint,
        no row deleted or updated. Encrypted with this run's key when the target is (no key:
        StoreError, nothing written). SQLite holds the file's write lock from the check to the commit;
        PostgreSQL locks the checkpoints table against writes for the transaction; MongoDB uses a
        multi-document transaction where the server has them (else: checked, then one insert).
        ``before_commit`` (a test's fault hook) runs before the commit. Returns the copy's id."""
        ...
