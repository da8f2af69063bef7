"""The protocol every backend implements, one class per section, in the order of the backend
packages' modules (``stores/<kind>/read.py``, ``history.py``, ``compat.py``, ``state.py``,
``erase.py``, ``copy.py``, ``prune.py``, ``usage.py``).

Everything backend-specific lives in those modules; the commands and the pure logic only see
this protocol and the types it names. Only type checkers and readers import this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from datetime import datetime

    from symfonic_cli.location import StoreLocation
    from symfonic_cli.model.checkpoint import CheckpointHead, CheckpointRecord, MessageState, MessageWrite
    from symfonic_cli.model.copy import DecodedCheckpoint, DecodedThread, DecodedWrite, RawRow, ThreadExport
    from symfonic_cli.model.envelope import EnvelopeRow, EnvelopeShape
    from symfonic_cli.model.erase import ExtraTable, ThreadErasePlan
    from symfonic_cli.model.history import CheckpointFacts, WriteChannel
    from symfonic_cli.model.listing import StoreInfo, ThreadSummary
    from symfonic_cli.model.prune import ThreadPrunePlan
    from symfonic_cli.model.run_state import ThreadRunRows, ThreadRunState


class ReadProtocol(Protocol):
    """What is in the store, one thread, and the transcript reads (stores/<kind>/read.py)."""

    location: StoreLocation

    @property
    def kind(self) -> str: ...

    def close(self) -> None: ...

    # -- what is in the store (aggregated in the database, no blob decoding)
    def list_threads(
        self,
        *,
        tenant: str | None = None,
        sub_tenant: str | None = None,
        limit: int | None = None,
        last_before: str | None = None,
        last_from: str | None = None,
    ) -> Iterator[ThreadSummary]:
        """Threads newest activity first, by instant; ``tenant``/``sub_tenant`` filter on the key
        prefix. ``last_before``/``last_from`` (checkpoint-id bounds, retention/window.py) keep
        threads whose last activity is before / at or after the bound's instant, plus every
        undatable thread (``undatable`` set). Each row carries ``first_at``/``last_at``. The
        database decides the threads whose ids are all ordered (HAVING / $match), the rest are
        dated checkpoint by checkpoint (stores/activity.py, shared by every backend)."""
        ...

    def thread_summary(self, key: str) -> ThreadSummary | None: ...

    def window_keys(
        self,
        *,
        tenant: str | None = None,
        sub_tenant: str | None = None,
        last_before: str | None = None,
        last_from: str | None = None,
        after: str | None = None,
        limit: int = 500,
    ) -> list[str]:
        """A page of a retention sweep (keyset pagination): up to ``limit`` keys greater than
        ``after``, in the store's binary key order, of the threads ``list_threads`` gives for the
        same window, less the undatable ones (stores/activity.py)."""
        ...

    def window_count(
        self, *, tenant: str | None = None, sub_tenant: str | None = None, last_before: str | None = None, last_from: str | None = None
    ) -> int:
        """The number of threads ``window_keys`` pages through (counted in the database, threads
        with ids outside the ordered form dated one by one)."""
        ...

    def info(self) -> StoreInfo: ...

    # -- one thread
    def read_checkpoint(
        self,
        key: str,
        *,
        checkpoint_ns: str = "",
        checkpoint_id: str | None = None,
        channels: tuple[str, ...] = ("messages",),
    ) -> CheckpointRecord | None:
        """The latest checkpoint of a namespace (or the given id), strictly decoded."""
        ...

    def iter_message_states(self, key: str) -> Iterator[MessageState]:
        """Every checkpoint of the thread in every namespace, ``checkpoint_id`` descending."""
        ...

    # -- timestamps (``symfonic_cli.transcript.timestamps`` resolves with these, linear in the
    # conversation; it walks ``iter_message_states`` only when their answer cannot be proven)

    def iter_checkpoint_heads(self, key: str) -> Iterator[CheckpointHead]:
        """Every checkpoint of thread ``key`` in EVERY namespace, ``checkpoint_id`` ASCENDING,
        as CheckpointHead, without decoding any message: SQLite/MongoDB read ``ts`` and the
        ``messages`` array length from the first bytes of the checkpoint blob
        (``symfonic_cli.transcript.timestamps.checkpoint_blob_head``, retried with more bytes on NeedMore;
        SQLite uses incremental blob I/O so a long blob is not read); PostgreSQL reads ``checkpoint ->> 'ts'``,
        ``metadata ->> 'source'`` and the length from the first bytes of the ``messages`` blob of
        the version in ``channel_versions`` (``substring(blob from 1 for 9)`` with
        ``timestamps.channel_blob_count``; type ``empty`` or no blob: 0)."""
        ...

    def iter_message_writes(self, key: str) -> Iterator[MessageWrite]:
        """Every stored write of thread ``key`` whose channel is ``messages``, every namespace,
        any order, payloads as stored (not decoded). Writes only hold a task's NEW messages, so
        this is linear in the conversation."""
        ...

    def read_message_state(self, key: str, *, checkpoint_id: str | None = None) -> MessageState | None:
        """The root namespace's latest checkpoint of ``key`` (or
        ``checkpoint_id`` in it) as a MessageState, payload NOT decoded; None when there is none.
        ``symfonic_cli.transcript.read`` then builds rows straight from the stored fields when
        every value is a standard message or plain data, and otherwise uses ``read_checkpoint``.
        SQLite/MongoDB: the whole checkpoint blob (``encoding="checkpoint"``); PostgreSQL: the
        ``messages`` blob of the version in ``channel_versions`` (``encoding="channel"``, type
        ``empty`` or no blob -> payload None)."""
        ...


class HistoryProtocol(Protocol):
    """thread history and thread diff (stores/<kind>/history.py)."""

    # -- history (``symfonic thread history``; see CheckpointFacts, WriteChannel in model/history.py)

    def iter_checkpoint_facts(self, key: str) -> Iterator[CheckpointFacts]:
        """Every checkpoint of thread ``key`` in every namespace, any order: ``metadata["source"]``,
        ``["step"]`` and ``["writes"]`` (decoded as the saver decodes metadata), no blob decoded.
        Metadata that cannot be read gives None fields, never an error."""
        ...

    def iter_write_channels(self, key: str) -> Iterator[WriteChannel]:
        """Every stored write of thread ``key``, every namespace, any order, WITHOUT its value:
        the checkpoint it was written on, task id, task path ("" when not stored), idx, channel."""
        ...

    def checkpoint_ids(self, key: str) -> list[tuple[str, str]]:
        """``(checkpoint_ns, checkpoint_id)`` of every checkpoint of thread ``key``, any order;
        nothing else read (``thread diff`` resolves ``-N`` and finds an id's namespace)."""
        ...

    def read_messages_as_stored(self, key: str, *, checkpoint_ns: str, checkpoint_id: str) -> MessageState | None:
        """As ``read_message_state``, for a checkpoint of any namespace, payload NOT decoded; None
        when there is no such checkpoint (``thread history`` reads message ids and compares
        messages from the stored fields, without building any)."""
        ...


class CompatProtocol(Protocol):
    """The compat report's reads (stores/<kind>/compat.py)."""

    # -- compat (read-only; see EnvelopeShape, EnvelopeRow)
    #
    # Only checkpoint METADATA is read, never checkpoint blobs or writes. ``envelope_key`` is a
    # top-level metadata key chosen by the operator (any string: quote it, never splice it into
    # SQL/JSON paths unescaped). Metadata forms: SQLite JSON text (json_type/json_extract);
    # PostgreSQL JSONB (jsonb_typeof, ->); MongoDB subdocuments whose leaves the saver serialized
    # (decode them with the saver's loads_metadata before reporting types and values).
    # "Latest" means a thread's greatest checkpoint_id in the root namespace "". Driver errors
    # become StoreError (exit 4), passwords scrubbed.

    def envelope_shapes(self, envelope_key: str, *, older_than: str | None = None) -> Iterator[EnvelopeShape]:
        """Every checkpoint of the store (all threads, all namespaces) counted by envelope shape,
        aggregated IN THE DATABASE (GROUP BY / $group): memory must not grow with the store.

        ``older_than`` is a checkpoint id (UUIDv6, so ids compare as strings in time order):
        ``older`` is ``checkpoint_id < older_than`` and is part of the grouping. ``latest`` counts,
        per group, the checkpoints that are their thread's latest root-namespace checkpoint (a
        window function / $group-$first over (thread_id, checkpoint_id DESC)), so that
        sum(latest) is the number of threads that have a root-namespace checkpoint. Any order.
        """
        ...

    def iter_envelopes(self, envelope_key: str, *, thread: str | None = None) -> Iterator[EnvelopeRow]:
        """Every checkpoint (of ``thread``, or of all threads), all namespaces, streamed (a
        server-side cursor; nothing held beyond a batch), ordered by thread_id ascending
        (bytewise), then checkpoint_id descending, then checkpoint_ns ascending."""
        ...

    def envelope_key_candidates(self, envelope_key: str, *, limit: int = 5) -> list[tuple[str, int]]:
        """Other top-level metadata keys (not ``envelope_key``) whose value is a mapping holding both
        a ``format_version`` and a ``writer_line`` key (any values): ``(key, checkpoints)``, most
        checkpoints first, then key ascending, at most ``limit``. Aggregated in the database."""
        ...


class StateProtocol(Protocol):
    """Run state: thread show, threads list --status/--with-size (stores/<kind>/state.py)."""

    # -- run state (``thread show``, ``threads list --status/--with-size``; types in model/run_state.py)

    def read_run_rows(self, key: str) -> ThreadRunRows | None:
        """Thread ``key``'s latest checkpoint of every namespace as a LeanCheckpoint (version maps,
        the channels holding a value, pending Sends' target nodes, message count; no stored class
        built), the pending writes of those checkpoints (payloads only for ``__interrupt__`` and
        ``__error__``), and its totals: checkpoints, namespaces, stored size in bytes (checkpoints,
        blobs and writes as the database measures them: SQLite ``length()``, PostgreSQL
        ``pg_column_size``/``octet_length``, MongoDB ``$bsonSize``), first and last checkpoint id.
        None when the thread has no checkpoint."""
        ...

    def iter_run_states(
        self,
        *,
        prefix: str | None = None,
        with_size: bool = False,
        with_status: bool = True,
        statuses: set[str] | None = None,
    ) -> Iterator[ThreadRunState]:
        """Every thread (keys starting with ``prefix``) with its status computed
        in the database from the latest root checkpoint's version maps and its pending writes'
        per-task flags (status None when ``with_status`` is False), and with ``with_size`` its
        stored size; any order. ``statuses``: the statuses the caller keeps (None: all); a store
        may leave out threads with any other status, and skip reading their totals."""
        ...


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

    def prune_plan(self, key: str, *, keep: int = 1, newer_than: datetime | None = None, times: bool = True) -> ThreadPrunePlan:
        """What pruning ``key`` would delete now (rows, bytes, parents detached, DeltaChannel
        ancestors kept, a skip reason, with ``times`` the messages whose transcript time moves). Read-only."""

    def prune_plans(self, keys: list[str], *, keep: int = 1, newer_than: datetime | None = None, times: bool = True) -> list[ThreadPrunePlan]: ...

    def prune_thread(self, key: str, *, keep: int = 1, newer_than: datetime | None = None,
                     expected: dict[str, int] | None = None) -> tuple[dict[str, int], int]:
        """Prune ``key`` in ONE transaction on one snapshot, the rules decided on that snapshot, the
        rows deleted compared with ``expected`` and the kept state (what get_tuple reads of every kept
        checkpoint: checkpoint, metadata, pending writes, blobs) compared before and after the deletes,
        before the commit: a difference rolls back (StoreError). ThreadSkipped: nothing changed.
        Returns (rows deleted, checkpoints left with no parent)."""

    def prune_remaining(self, key: str, *, keep: int = 1, newer_than: datetime | None = None) -> int:
        """After the commit: the checkpoints a prune would still delete (0 means verified)."""

    def prune_verified(self, key: str, *, keep: int = 1, newer_than: datetime | None = None,
                       expected: dict[str, int] | None = None) -> tuple[dict[str, int], int, int]:
        """prune_thread and a fresh plan's verification (PostgreSQL: inside the transaction, after the
        deletes): (rows deleted, checkpoints left with no parent, checkpoints still to prune)."""

    def compact_check(self) -> list[str]:
        """``--compact``, before anything is deleted: refuse (StoreError) what cannot work (SQLite: less
        free disk than the file); notes for the plan (locks taken, what the space becomes)."""

    def compact(self) -> tuple[dict[str, int], dict[str, int], list[str]]:
        """After the last thread: SQLite ``wal_checkpoint(TRUNCATE)`` and ``VACUUM``; PostgreSQL
        ``VACUUM (ANALYZE)`` of the three tables; MongoDB ``compact`` where the server allows it.
        (bytes before, bytes after, notes)."""


class UsageProtocol(Protocol):
    """store usage (stores/<kind>/usage.py)."""

    def store_usage(self, *, top: int = 10, keep: int = 1) -> dict[str, Any]:
        """Where the bytes are, aggregated in the database (no row decoded): the file (SQLite: size,
        -wal, pages, free pages, page size), the tables (PostgreSQL: heap, TOAST, index bytes, dead
        tuples) or collections (MongoDB: storage, free, index bytes, where the server reports them);
        ``checkpoints``/``writes``/``blobs`` ``{"count", "bytes"}`` (blobs None where there are none);
        ``channels`` (rows, bytes per channel and table); ``largest_threads`` (``top``, largest first:
        key, bytes, checkpoints); ``reclaimable`` (keep, checkpoints, writes, blobs, bytes, threads,
        skipped_threads): exactly what ``prune_thread(keep=keep)`` of every thread deletes; ``notes``."""
        ...


class SearchProtocol(Protocol):
    """threads search (stores/<kind>/search.py); MongoDB has none: search/run.py reads each thread."""

    def search_candidates(self, prefilter: Any, *, tenant: str | None = None, sub_tenant: str | None = None) -> Iterator[str]:
        """The keys (of ``tenant``/``sub_tenant``; any order) whose latest root checkpoint may hold the
        needle: ``prefilter`` (search/prefilter.py) on that checkpoint's bytes in the database (SQLite:
        its blob; PostgreSQL: its messages blob). Never leaves out a thread holding the needle."""
        ...


class Store(ReadProtocol, HistoryProtocol, CompatProtocol, StateProtocol, EraseProtocol, CopyProtocol, PruneProtocol, UsageProtocol, Protocol):
    """A store of any kind: every section above."""
