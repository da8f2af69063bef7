"""The one small protocol every backend implements.

Everything backend-specific lives in ``stores/<kind>.py``; the commands and the pure logic
only see these types.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple, Protocol

from symfonic_cli.location import StoreLocation
from symfonic_cli.threadkey import KeyParts, parse_key

_UUID_EPOCH = datetime(1582, 10, 15, tzinfo=timezone.utc)


def checkpoint_id_time(checkpoint_id: str | None) -> datetime | None:
    """The creation time LangGraph encodes in a checkpoint id (a UUIDv6), or None.

    Lets listings show activity without decoding a single checkpoint blob.
    """
    # Parsed by hand: this runs twice per listed thread, and uuid.UUID() is slow.
    if not checkpoint_id or len(checkpoint_id) != 36 or checkpoint_id[14] != "6":
        return None
    try:
        ticks = (
            (int(checkpoint_id[0:8], 16) << 28)
            | (int(checkpoint_id[9:13], 16) << 12)
            | int(checkpoint_id[15:18], 16)
        )
    except ValueError:
        return None
    return _UUID_EPOCH + timedelta(microseconds=ticks // 10)


class _ActivitySpan:
    """First and last activity, read from the checkpoint ids (UUIDv6) without decoding."""

    first_checkpoint_id: str | None
    last_checkpoint_id: str | None

    @property
    def first_activity(self) -> datetime | None:
        return checkpoint_id_time(self.first_checkpoint_id)

    @property
    def last_activity(self) -> datetime | None:
        return checkpoint_id_time(self.last_checkpoint_id)


@dataclass(frozen=True)
class ThreadSummary(_ActivitySpan):
    key: str
    checkpoints: int
    first_checkpoint_id: str | None
    last_checkpoint_id: str | None

    @property
    def parts(self) -> KeyParts | None:
        return parse_key(self.key)


@dataclass(frozen=True)
class StoreInfo:
    kind: str
    location: str  # masked
    threads: int
    checkpoints: int
    writes: int
    details: dict[str, Any] = field(default_factory=dict)  # backend-specific, printable


@dataclass(frozen=True)
class CheckpointRecord:
    """One checkpoint, decoded strictly. ``channel_values`` holds only the channels asked for."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    ts: str | None
    metadata: dict[str, Any]
    channel_values: dict[str, Any]
    channel_versions: dict[str, Any]
    blocked: frozenset[str] = frozenset()  # classes the strict decoder refused to build


@dataclass(frozen=True)
class MessageState:
    """A thread checkpoint's ``messages`` list, in the form the backend stores it.

    ``encoding`` says how ``payload`` is to be read:
    - ``"checkpoint"``: the whole serialized checkpoint (SQLite, MongoDB); messages sit in
      ``channel_values["messages"]`` and ``ts`` may be None (then read it from the payload).
    - ``"channel"``: the serialized messages value alone (PostgreSQL blobs); ``ts`` is set.
    ``version`` identifies the stored value: states with equal versions hold equal lists, so a
    reader decodes each version once. ``payload`` None means the checkpoint has no messages.
    """

    checkpoint_ns: str
    checkpoint_id: str
    ts: str | None
    version: Any
    encoding: str
    payload_type: str | None
    payload: bytes | None


# ---------------------------------------------------------------------------------------------
# compat (``symfonic compat report|show``): envelope shapes, read from checkpoint metadata only
# ---------------------------------------------------------------------------------------------


class _Absent:
    """A key that is not there (distinct from a JSON null)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self):
        return (_Absent, ())


ABSENT: Any = _Absent()

# JSON type names of the value under the envelope key (EnvelopeShape.kind).
ENVELOPE_KINDS = ("absent", "null", "boolean", "integer", "number", "string", "array", "object")


@dataclass(frozen=True)
class EnvelopeShape:
    """One group of checkpoints whose envelopes look alike in everything that decides a verdict.

    ``kind`` is the JSON type of ``metadata[envelope_key]`` (one of ENVELOPE_KINDS; "absent" when
    the key is missing or the metadata is empty; "integer" is a JSON number without fraction or
    exponent, "number" any other). The other fields are set only when kind == "object", each the
    value of that key inside the envelope, as a faithful Python JSON value: ``True``/``False``
    for JSON booleans (never 1/0), ``int`` for integers, ``float`` for other numbers, ``str``,
    ``None`` for JSON null, ``[]``/``{}`` as a placeholder for a nested array/object (its content
    does not matter), and ``ABSENT`` when the key is not in the envelope (for format_version,
    writer_line and finalized a backend may return None instead: they decode alike; never for
    safe_boundary, where a null is a finding and absence is not).

    Grouping: by (JSON type, value) of format_version, writer_line, safe_boundary and finalized;
    by JSON type only for boundary_sequence (return any value of that type, e.g. 0 or "");
    and by ``older``. A backend may return several rows with equal fields (callers add them up).
    """

    kind: str
    format_version: Any = ABSENT
    writer_line: Any = ABSENT
    safe_boundary: Any = ABSENT
    finalized: Any = ABSENT
    boundary_sequence: Any = ABSENT
    older: bool = False  # checkpoint_id < older_than (always False when older_than is None)
    checkpoints: int = 0  # checkpoints in this group, every namespace
    latest: int = 0  # of them, how many are their thread's latest root-namespace ("") checkpoint


@dataclass(frozen=True)
class EnvelopeRow:
    """One checkpoint's envelope and the metadata ``compat show`` prints; never a blob."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    step: Any  # metadata["step"] as stored (None when absent)
    source: Any  # metadata["source"] as stored (None when absent)
    envelope: Any  # metadata[envelope_key] fully decoded (dict, list, scalar, None), ABSENT if missing


# ---------------------------------------------------------------------------------------------
# erase (``symfonic thread erase``): the cascade's types
# ---------------------------------------------------------------------------------------------

# A table, column or collection name from the config file: a plain identifier, optionally
# "schema.table" on PostgreSQL. Checked before any backend sees it; backends still quote names.
ERASE_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]{0,62}"
ERASE_KEY_PARTS = ("thread", "tenant", "session")


@dataclass(frozen=True)
class ExtraTable:
    """A deployment table (SQL) or collection (MongoDB) whose rows belong to a thread.

    Declared in the config file (``erase_extra`` of the store's entry), never guessed: an
    undeclared table is never touched. ``match`` pairs a column (field) with the part of the
    thread key it holds: ``"thread"`` (the whole key), ``"tenant"`` or ``"session"``. A row is
    part of the cascade when every pair matches by equality.
    """

    name: str
    match: tuple[tuple[str, str], ...]  # ((column, part), ...), validated identifiers and parts

    def filters(self, key: str) -> tuple[tuple[str, str], ...] | None:
        """``((column, value), ...)`` to AND together for ``key``; None when the key has no such
        part (a two-part legacy key and a "session" column): then the table holds nothing of it."""
        parts = parse_key(key)
        out = []
        for column, part in self.match:
            if part == "thread":
                out.append((column, key))
            elif parts is None:
                return None
            else:
                out.append((column, parts.tenant if part == "tenant" else parts.session))
        return tuple(out)


@dataclass(frozen=True)
class ThreadErasePlan(_ActivitySpan):
    """What erasing one thread would delete now, read without deleting anything."""

    key: str
    # table/collection name -> rows (documents) that would go. Every table of the cascade is
    # listed, zeros included, in delete order: extra tables first, checkpoint tables last.
    rows: dict[str, int]
    first_checkpoint_id: str | None  # min checkpoint_id over every namespace, None if none
    last_checkpoint_id: str | None  # max checkpoint_id over every namespace

    @property
    def total(self) -> int:
        return sum(self.rows.values())


# ---------------------------------------------------------------------------------------------
# migrate (``symfonic migrate``): a thread as raw stored rows and as decoded values
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RawRow:
    """One stored row (document) of a thread, exactly as the store holds it.

    ``table`` is the backend's own table/collection role name (SQLite: ``"checkpoints"``,
    ``"writes"``; PostgreSQL: ``"checkpoints"``, ``"checkpoint_blobs"``, ``"checkpoint_writes"``;
    MongoDB: ``"checkpoints"``, ``"writes"``), never a user-configured name, so an export from one
    store imports into another of the same kind whatever its schema/collection options.
    ``key`` is the row's primary key WITHOUT the thread id, as a tuple of plain values
    (checkpoints: ``(ns, checkpoint_id)``; writes: ``(ns, checkpoint_id, task_id, idx)``;
    PostgreSQL blobs: ``(ns, channel, version)``). ``data`` holds every other stored column as
    plain, ``==``-comparable Python values: ``bytes`` (never memoryview), ``str``, numbers, None,
    and for JSONB/BSON documents the decoded dict/list as stored (no value decoding beyond that;
    MongoDB: the document minus ``_id``, ``thread_id`` and the key fields; drop ``created_at`` TTL
    fields, they are re-stamped on import when the target has a TTL). Two rows with equal
    ``(table, key)`` and equal ``data`` are the same stored content.
    """

    table: str
    key: tuple
    data: tuple | dict


@dataclass(frozen=True)
class ThreadExport:
    """Every stored row of one thread (all namespaces, every table), for a same-kind copy."""

    kind: str
    key: str  # the thread id
    rows: list[RawRow]

    def checkpoint_rows(self) -> list[RawRow]:
        return [r for r in self.rows if r.table == "checkpoints"]


@dataclass(frozen=True)
class DecodedCheckpoint:
    """One checkpoint as the saver's own ``get_tuple()`` would return it, decoded strictly.

    ``checkpoint`` is the whole Checkpoint mapping (``v``, ``id``, ``ts``, ``channel_values``,
    ``channel_versions``, ``versions_seen``, ``updated_channels``, ... whatever is stored), with
    ``channel_values`` rebuilt the way the saver rebuilds them (PostgreSQL: inline values plus the
    blobs named by ``channel_versions``). ``metadata`` is the decoded metadata mapping (MongoDB:
    each value through the serializer, as ``loads_metadata`` does). Values decoded through
    ``symfonic_cli.decoding.loads`` inside ``collect_blocked()``.
    """

    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    checkpoint: dict[str, Any]
    metadata: dict[str, Any]


@dataclass(frozen=True)
class DecodedWrite:
    """One pending write, decoded strictly; ``idx`` as stored (negative for special channels)."""

    checkpoint_ns: str
    checkpoint_id: str
    task_id: str
    task_path: str  # "" when the store has no task_path column
    idx: int
    channel: str
    value: Any

    @property
    def key(self) -> tuple:
        return (self.checkpoint_ns, self.checkpoint_id, self.task_id, self.idx)


@dataclass
class DecodedThread:
    """A whole thread decoded: what a cross-kind copy writes and what verification compares.

    ``checkpoints`` ascending by ``checkpoint_id`` (parents before children) over every
    namespace; ``writes`` ordered by ``(checkpoint_ns, checkpoint_id, task_path, task_id, idx)``.
    ``blocked`` maps a description of each value the strict decoder could not rebuild exactly
    (e.g. ``"checkpoint 1f0..., ns '', channel 'messages'"`` or ``"write 1f0.../task/0 channel
    'x'"``) to the sorted class names it refused; empty when everything decoded exactly.
    """

    key: str
    checkpoints: list[DecodedCheckpoint]
    writes: list[DecodedWrite]
    blocked: dict[str, list[str]] = field(default_factory=dict)


class MigrationConflict(Exception):
    """Raised by an import when a row/checkpoint/write it was asked to add already exists.

    The import's transaction is rolled back: the target thread is left exactly as it was.
    ``symfonic_cli.migration`` reports the thread as a conflict (never shown as a traceback).
    """


def new_versions_in_order(checkpoints: list[DecodedCheckpoint]) -> list[dict[str, Any]]:
    """For each checkpoint (ascending order), the ``new_versions`` to hand to ``saver.put``:
    the channel versions not already named by an earlier checkpoint of the same namespace.

    PostgreSQL keeps channel values apart, one blob per (channel, version); a version seen
    before was stored with that earlier checkpoint (written now or already in the target).
    """
    seen: dict[str, set[tuple[str, str]]] = {}
    out = []
    for cp in checkpoints:
        known = seen.setdefault(cp.checkpoint_ns, set())
        versions = cp.checkpoint.get("channel_versions") or {}
        new = {ch: v for ch, v in versions.items() if (ch, str(v)) not in known}
        known.update((ch, str(v)) for ch, v in versions.items())
        out.append(new)
    return out


def migrate_fault_point(tag: str) -> None:
    """Test hook: kill this process (SIGKILL) at the Nth call with ``tag`` when
    ``SYMFONIC_TEST_MIGRATE_KILL=tag:N`` is set. Imports call it with ``"before-commit"`` after
    every row of a thread is written and before the commit, so tests can prove a killed copy
    leaves each target thread whole or absent. No effect when the variable is unset.
    """
    import os

    spec = os.environ.get("SYMFONIC_TEST_MIGRATE_KILL")
    if not spec or not spec.startswith(tag + ":"):
        return
    _fault_counts[tag] = _fault_counts.get(tag, 0) + 1
    if _fault_counts[tag] >= int(spec.rsplit(":", 1)[1]):
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


_fault_counts: dict[str, int] = {}


# ---------------------------------------------------------------------------------------------
# timestamps (``symfonic_cli/timestamps.py``): optional fast reads for linear-time timestamps
# ---------------------------------------------------------------------------------------------


class CheckpointHead(NamedTuple):  # a tuple: thousands are made per transcript
    """One checkpoint as the timestamp resolver needs it, read WITHOUT decoding its messages.

    - ``ts``: the checkpoint's own ``ts`` string exactly as stored (None when absent).
    - ``source``: ``metadata["source"]`` ("input", "loop", "update", "fork") where it is cheap
      to read (PostgreSQL, MongoDB), else None; only "fork" is used (never proven an append).
      SQLite leaves it None: its metadata sits after the blob in the row, and reaching it reads
      the whole blob. (The step is not needed: LangGraph puts it in the checkpoint id.)
    - ``message_count``: ``len(channel_values["messages"])`` of this checkpoint; 0 when the
      checkpoint has no ``messages`` value; None when it cannot be told cheaply or is not a
      plain list (e.g. delta-encoded) -- the resolver then takes the exact walk.
    """

    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    ts: str | None
    source: str | None
    message_count: int | None
    step: int | None = None  # metadata["step"] if read; informational, the resolver uses the id's step


class MessageWrite(NamedTuple):
    """One stored pending write to the ``messages`` channel: a row of the writes table.

    ``checkpoint_id`` is the checkpoint the writing task ran ON (the parent of the checkpoint
    the write produced). ``payload_type``/``payload`` are the stored ``(type, bytes)`` pair.
    """

    checkpoint_ns: str
    checkpoint_id: str
    task_id: str
    idx: int
    payload_type: str | None
    payload: bytes | None


class Store(Protocol):
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
    ) -> Iterator[ThreadSummary]:
        """Threads newest activity first; ``tenant``/``sub_tenant`` filter on the key prefix."""
        ...

    def thread_summary(self, key: str) -> ThreadSummary | None: ...

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

    # -- erase (only on a store opened with writable=True; see ExtraTable, ThreadErasePlan)
    #
    # The cascade of a thread, in delete order: each declared extra table, then the saver's
    # tables: SQLite ``writes``, ``checkpoints``; PostgreSQL ``checkpoint_writes``,
    # ``checkpoint_blobs``, ``checkpoints``; MongoDB the writes collection, then the checkpoints
    # collection. Every namespace (subgraph namespaces included) is part of the thread. Table
    # names in the returned dicts are the names as the operator knows them (the configured
    # collection names on MongoDB, unqualified saver table names on PostgreSQL, the declared
    # ``ExtraTable.name`` for extras). Driver errors become StoreError (exit 4), passwords scrubbed.

    def erase_prepare(self, extra: tuple[ExtraTable, ...]) -> list[str]:
        """Check, before anything is deleted, that this session can erase; set it up for erasing.

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

    def thread_keys_with_prefix(self, prefix: str) -> list[str]:
        """Every distinct thread key starting with ``prefix`` (bytewise), sorted, found in the
        checkpoints OR the writes table/collection (a thread may hold only pending writes)."""
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
        """
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


    # -- migrate (``symfonic migrate``; see RawRow, ThreadExport, DecodedThread above)
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
          ``symfonic_cli.migration.write_batches(writes)`` which does exactly that.

        Before writing, inside the transaction, check that none of the checkpoint ids and write
        keys exist yet for the thread; if one does, roll back and raise MigrationConflict. Call
        ``migrate_fault_point("before-commit")`` before the commit. Writable stores only."""
        ...


    # -- timestamps (OPTIONAL: ``symfonic_cli.timestamps`` uses them when BOTH exist, found with
    # getattr, and otherwise walks ``iter_message_states``; implementing them makes transcript
    # timestamps linear in the conversation instead of quadratic)

    def iter_checkpoint_heads(self, key: str) -> Iterator[CheckpointHead]:
        """Every checkpoint of thread ``key`` in EVERY namespace, ``checkpoint_id`` ASCENDING,
        as CheckpointHead, without decoding any message: SQLite/MongoDB read ``ts`` and the
        ``messages`` array length from the first bytes of the checkpoint blob
        (``symfonic_cli.timestamps.checkpoint_blob_head``, retried with more bytes on NeedMore;
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
        """OPTIONAL (found with getattr). The root namespace's latest checkpoint of ``key`` (or
        ``checkpoint_id`` in it) as a MessageState, payload NOT decoded; None when there is none.
        ``symfonic_cli.transcript_reader`` then builds rows straight from the stored fields when
        every value is a standard message or plain data, and otherwise uses ``read_checkpoint``.
        SQLite/MongoDB: the whole checkpoint blob (``encoding="checkpoint"``); PostgreSQL: the
        ``messages`` blob of the version in ``channel_versions`` (``encoding="channel"``, type
        ``empty`` or no blob -> payload None)."""
        ...


class SupportsWith:
    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()  # type: ignore[attr-defined]
