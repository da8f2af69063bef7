"""The protocol every backend implements, one class per section, in the order of the backend
packages' modules (``stores/<kind>/read.py``, ``history.py``, ``compat.py``, ``state.py``,
``erase.py``, ``copy.py``, ``prune.py``, ``usage.py``, ``search.py``); the sections that change a
store (erase, copy, prune) are in ``stores/protocol_changes.py``. Every method is required: the
commands call them, never probe for them.

Everything backend-specific lives in those modules; the commands and the pure logic only see
this protocol and the types it names. Only type checkers and readers import this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

from symfonic_cli.stores.protocol_changes import CopyProtocol, EraseProtocol, PruneProtocol, RewindProtocol

if TYPE_CHECKING:
    from symfonic_cli.location import StoreLocation
    from symfonic_cli.model.checkpoint import CheckpointHead, CheckpointRecord, MessageState, MessageWrite
    from symfonic_cli.model.envelope import EnvelopeRow, EnvelopeShape
    from symfonic_cli.model.encryption import EncryptionCensus
    from symfonic_cli.model.history import CheckpointFacts, WriteChannel
    from symfonic_cli.model.listing import StoreInfo, ThreadSummary
    from symfonic_cli.model.run_state import ThreadRunRows, ThreadRunState
    from symfonic_cli.stores.messages import View


class ReadProtocol(Protocol):
    """What is in the store, one thread, and the transcript reads (stores/<kind>/read.py)."""

    location: StoreLocation
    # The order the saver replays a checkpoint's writes in: "sorted" (writes_sort_key: task_path,
    # task_id, idx; SQLite, PostgreSQL) or "stored" (as the server lists them; MongoDBSaver).
    writes_replay_order: str
    # What the driver warned about while opening, escaped, a line each (a MongoDB URL option it ignores).
    open_warnings: list[str]

    @property
    def kind(self) -> str: ...

    def close(self) -> None: ...

    def connection_lost(self) -> bool:
        """Whether the connection to a database server is gone (the server restarted, or an
        administrator terminated its backend): every later read fails, a new store opened works
        (``symfonic mcp`` reconnects). SQLite and MongoDB (whose driver reconnects) never lose it."""
        ...

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

    def window_keys(self, *, tenant: str | None = None, sub_tenant: str | None = None, last_before: str | None = None,
                    last_from: str | None = None, after: str | None = None, limit: int = 500) -> list[str]:
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

    def window_undatable(self, *, tenant: str | None = None, sub_tenant: str | None = None) -> int:
        """How many threads under the prefix no time window selects: a checkpoint carries no time."""
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

    def message_views(self, key: str, *, decode: bool = True, states: Iterator[Any] | None = None) -> Iterator[View]:
        """The messages each checkpoint of the thread holds, each checkpoint read once, as a prefix
        of a shared list where it is one (stores/messages.py ``checkpoint_views``); raises ``Delta``
        for a delta-encoded thread: ``delta_message_views`` reads it. ``decode=False``: nothing
        decoded where a byte comparison proves a prefix; ``states``: the thread's message states
        when the caller has them (read once)."""
        ...

    def delta_message_views(self, key: str) -> Iterator[View]:
        """``message_views`` of a thread whose ``messages`` channel is delta-encoded (a
        ``DeltaChannel``), rebuilt from the store (stores/delta.py)."""
        ...

    def written_messages(self, key: str) -> tuple[dict[tuple[str, str], set[str]], dict[tuple[str, str], list[Any]]]:
        """What the thread's stored writes to ``messages`` do, per checkpoint ``(ns, id)``: the
        message ids they remove and the messages (stored fields) they add, each write decoded once
        (stores/messages.py)."""
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
        ``older_than``: a checkpoint id (UUIDv6: ids compare as strings in time order); ``older``
        is ``checkpoint_id < older_than``, part of the grouping. ``latest`` counts, per
        group, the checkpoints that are their thread's latest root-namespace checkpoint (a window
        function / $group-$first over (thread_id, checkpoint_id DESC)): sum(latest) is the number
        of threads with a root-namespace checkpoint. Per thread_id and package_version too, a
        thread's groups consecutive (by thread_id, bytewise): threads counted as they stream.
        """
        ...

    def iter_envelopes(self, envelope_key: str, *, thread: str | None = None) -> Iterator[EnvelopeRow]:
        """Every checkpoint (of ``thread``, or of all threads), all namespaces, streamed (a
        server-side cursor; nothing held beyond a batch), ordered by thread_id ascending
        (bytewise), then checkpoint_id descending, then checkpoint_ns ascending."""
        ...

    def encryption_census(self) -> EncryptionCensus:
        """Serialized values (checkpoints, blobs, writes) counted by whether they are encrypted
        (``model/encryption.py``), in the database; the first few plaintext checkpoint ids."""
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
        keys: list[str] | None = None,
        totals: bool = True,
    ) -> Iterator[ThreadRunState]:
        """Every thread (keys starting with ``prefix``; with ``keys``, only the threads of those
        keys, read by key: a listing's page, never a pass over every thread) with its status computed
        in the database from the latest root checkpoint's version maps and its pending writes'
        per-task flags (status None when ``with_status`` is False), and with ``with_size`` its
        stored size; any order. ``statuses``: the statuses the caller keeps (None: all); a store
        may leave out threads with any other status, and skip reading their totals. ``totals``
        False: the caller has each thread's count and ids (a listing's page) and reads only the
        status (and size) of the rows; a store may then leave the count and ids out."""
        ...


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
    """threads search (stores/<kind>/search.py)."""

    def search_candidates(self, prefilter: Any, *, tenant: str | None = None, sub_tenant: str | None = None) -> Iterator[str] | None:
        """The keys (of ``tenant``/``sub_tenant``; any order) whose latest root checkpoint may hold the
        needle: ``prefilter`` (search/prefilter.py) on that checkpoint's bytes in the database (SQLite:
        its blob; PostgreSQL: its messages blob). Never leaves out a thread holding the needle.
        None: the store cannot narrow in the database (MongoDB: search/run.py streams each thread)."""
        ...


class Store(ReadProtocol, HistoryProtocol, CompatProtocol, StateProtocol, EraseProtocol, CopyProtocol, PruneProtocol, RewindProtocol, UsageProtocol,
            SearchProtocol, Protocol):
    """A store of any kind: every section above."""

    # ``with open_store(...) as store:`` closes it (stores/_common.py SupportsWith).
    def __enter__(self) -> Store: ...

    def __exit__(self, *exc: object) -> None: ...
