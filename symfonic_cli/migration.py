"""``symfonic migrate``: copying threads between stores, and proving the copy.

Per thread: plan against what the target already holds (identical -> skip, different ->
conflict, nothing written), write the rest in one target transaction (raw rows between stores of
the same kind, the target saver's own ``put``/``put_writes`` between kinds), then read the
thread back from the target and compare it, decoded, with the source.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from symfonic_cli.errors import StoreError, SymfonicError, UsageError
from symfonic_cli.stores.protocol import Store
from symfonic_cli.stores.thread_copy import (
    DecodedCheckpoint,
    DecodedThread,
    DecodedWrite,
    MigrationConflict,
    new_versions_in_order,
)

EXIT_MIGRATE_INCOMPLETE = 7

# Statuses of one thread in the summary.
COPIED, SKIPPED, CONFLICT, FAILED = "copied", "skipped", "conflict", "failed"
# --verify-only says whether the target holds the source's content.
VERIFIED, DIFFERS = "verified", "differs"
# --dry-run says what would happen instead.
DRY = {COPIED: "copy", SKIPPED: "skip", CONFLICT: "conflict", FAILED: "failed"}
# Keys of the checkpoint mapping and metadata a saver may legitimately leave out when writing.
_DROPPED_METADATA = ("writes",)  # PostgreSQL's put stores metadata without "writes"


class MigrateIncomplete(SymfonicError):
    """Some thread was in conflict, refused, failed, or did not verify (summary already printed)."""

    exit_code = EXIT_MIGRATE_INCOMPLETE


class UnrebuildableWrites(Exception):
    """Pending writes whose stored indexes ``put_writes`` cannot reproduce."""


# -- selection


def select_threads(
    source: Store,
    *,
    threads: list[str],
    tenant: str | None,
    sub_tenant: str | None,
    session: str | None,
    from_file: str | None,
    all_threads: bool,
) -> list[str]:
    """The thread keys to copy, in a stable order, from exactly one selection option."""
    from symfonic_cli.threadkey import derive_key

    modes = [bool(threads), tenant is not None, from_file is not None, all_threads]
    if sum(modes) != 1:
        raise UsageError(
            "choose the threads with exactly one of --thread, --tenant, --from-file, --all"
        )
    if (sub_tenant is not None or session is not None) and tenant is None:
        raise UsageError("--sub-tenant and --session need --tenant")
    if threads:
        keys = list(threads)
    elif from_file is not None:
        from symfonic_cli.inputs import read_key_file

        keys = read_key_file(from_file)
    elif tenant is not None and session is not None:
        keys = [derive_key(tenant, sub_tenant, session)]
    elif tenant is not None:
        keys = [t.key for t in source.list_threads(tenant=tenant, sub_tenant=sub_tenant)]
    else:
        keys = [t.key for t in source.list_threads()]
    seen: set[str] = set()
    unique = []
    for k in keys:
        if not k:
            raise UsageError("an empty thread key was given")
        if k not in seen:
            seen.add(k)
            unique.append(k)
    return unique


# -- writes as put_writes batches


def write_batches(writes: Iterable[DecodedWrite]) -> list[tuple[str, str, str, str, list[tuple[str, Any]]]]:
    """Group writes into ``(ns, checkpoint_id, task_id, task_path, [(channel, value), ...])``
    calls of ``put_writes``, each list ordered so that the saver's
    ``WRITES_IDX_MAP.get(channel, position)`` gives back every stored ``idx``.

    Regular writes sit at their own index; special channels (errors, interrupts, ...) get a
    fixed negative index whatever their position, so they fill the gaps, then go last. A gap no
    special write can fill cannot be reproduced: UnrebuildableWrites.
    """
    from langgraph.checkpoint.base import WRITES_IDX_MAP

    groups: dict[tuple[str, str, str, str], list[DecodedWrite]] = {}
    for w in writes:
        groups.setdefault((w.checkpoint_ns, w.checkpoint_id, w.task_id, w.task_path), []).append(w)
    out = []
    for (ns, cid, task_id, task_path), ws in groups.items():
        special = [w for w in ws if w.channel in WRITES_IDX_MAP]
        for w in special:
            if WRITES_IDX_MAP[w.channel] != w.idx:
                raise UnrebuildableWrites(
                    f"write {cid}/{task_id}/{w.idx} on channel '{w.channel}' is stored at an index its saver never gives it"
                )
        regular = {}
        for w in ws:
            if w.channel in WRITES_IDX_MAP:
                continue
            if w.idx < 0 or w.idx in regular:
                raise UnrebuildableWrites(f"write {cid}/{task_id}/{w.idx} has an index put_writes cannot reproduce")
            regular[w.idx] = w
        size = max(regular) + 1 if regular else 0
        fillers = list(special)
        batch: list[tuple[str, Any]] = []
        for i in range(size):
            if i in regular:
                batch.append((regular[i].channel, regular[i].value))
            elif fillers:
                f = fillers.pop(0)
                batch.append((f.channel, f.value))
            else:
                raise UnrebuildableWrites(
                    f"writes of task {task_id} at checkpoint {cid} skip index {i}; put_writes cannot reproduce that"
                )
        batch.extend((f.channel, f.value) for f in fillers)
        out.append((ns, cid, task_id, task_path, batch))
    return out


# -- decoding a whole thread fast, still strictly


class ThreadDecoder:
    """The strict decoder (``symfonic_cli.decoding``) for the values of one thread, each distinct
    stored object decoded once.

    A checkpoint blob holds the whole message list, so a thread of N checkpoints repeats each
    message up to N times; equal stored bytes decode to equal values, so the object is built
    once and shared (nothing here mutates decoded values). Classes the decoder refused are still
    reported for every value that holds them.
    """

    def __init__(self) -> None:
        shared = _shared_cache.get()
        self._cache: dict[tuple[int, bytes], tuple[Any, frozenset[str]]] = shared if shared is not None else {}

    def loads(self, type_: str | None, data: bytes | None, *, what: str) -> Any:
        from symfonic_cli import decoding

        if type_ != "msgpack" or not data:
            return decoding.loads(type_, data, what=what)
        import ormsgpack

        strict_hook = decoding._serializer()._unpack_ext_hook  # the strict serializer's own hook
        cache = self._cache

        def hook(code: int, payload: bytes) -> Any:
            hit = cache.get((code, payload))
            if hit is None:
                blocked: set[str] = set()
                decoding._blocked.append(blocked)  # collect_blocked(), without its cost per value
                try:
                    value = strict_hook(code, payload)
                finally:
                    decoding._blocked.pop()
                hit = cache[(code, payload)] = (value, frozenset(blocked))
            if hit[1] and decoding._blocked:
                decoding._blocked[-1].update(hit[1])
            return hit[0]

        try:
            return ormsgpack.unpackb(bytes(data), ext_hook=hook, option=ormsgpack.OPT_NON_STR_KEYS)
        except Exception as exc:  # the bytes are not what they claim
            raise StoreError(f"{what} cannot be decoded ({type(exc).__name__}: {exc})") from None


_shared_cache: ContextVar[dict | None] = ContextVar("symfonic_migrate_decoded", default=None)


@contextmanager
def shared_decoding() -> Iterator[None]:
    """While one thread is migrated, source and target decoders share their objects: bytes the
    target stores exactly as the source did decode to the very same object, so comparing them
    costs an identity check."""
    token = _shared_cache.set({})
    try:
        yield
    finally:
        _shared_cache.reset(token)


class ReusingSerializer:
    """The target saver's own serializer, encoding each decoded object of a thread once.

    Wraps a plain ``JsonPlusSerializer`` (what every saver uses by default): the same msgpack
    ``default`` hook and options, so the bytes are exactly the ones the saver would write; an
    object shared by many checkpoints (a message, see ThreadDecoder) is encoded on first use and
    its encoding reused. Use one per thread copy; decoded values are never mutated meanwhile.
    Any other serializer is used as it is (``reusing`` returns it unchanged).
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self._ext: dict[int, tuple[Any, Any]] = {}

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        import ormsgpack
        from langgraph.checkpoint.serde import jsonplus

        if obj is None or isinstance(obj, (bytes, bytearray)):
            return self.inner.dumps_typed(obj)
        cache = self._ext

        def default(o: Any) -> Any:
            hit = cache.get(id(o))
            if hit is None or hit[0] is not o:
                hit = cache[id(o)] = (o, jsonplus._msgpack_default(o))  # keeps o alive: ids stay unique
            return hit[1]

        try:
            return "msgpack", ormsgpack.packb(obj, default=default, option=jsonplus._option)
        except ormsgpack.MsgpackEncodeError:
            return self.inner.dumps_typed(obj)  # the saver's own fallback path and error

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return self.inner.loads_typed(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def reusing(serde: Any) -> Any:
    """``serde`` wrapped in a ReusingSerializer when it is a plain JsonPlusSerializer."""
    from langgraph.checkpoint.serde import jsonplus

    if type(serde) is jsonplus.JsonPlusSerializer and hasattr(jsonplus, "_msgpack_default") and hasattr(jsonplus, "_option"):
        return ReusingSerializer(serde)
    return serde


# -- comparing decoded content


class _Equal:
    """Deep equality where JSON documents' lists equal msgpack's tuples, and each pair of shared
    objects (a message repeated in every checkpoint) is compared once.

    Equal means "the same bytes would be stored": a float NaN equals a NaN (JSON, msgpack and BSON
    store it alike, and Python's ``nan != nan`` would call a byte-identical row a conflict), and
    -0.0 differs from 0.0 because msgpack, JSON text and BSON keep the sign, unless
    ``signed_zero`` is off (a PostgreSQL side: JSONB numbers have no negative zero).
    """

    def __init__(self, signed_zero: bool = True) -> None:
        self.signed_zero = signed_zero
        self._seen: dict[tuple[int, int], bool] = {}
        self._keep: list[tuple[Any, Any]] = []  # keeps ids valid while the memo lives

    def __call__(self, a: Any, b: Any) -> bool:
        if a is b:
            return True
        if isinstance(a, (dict, list)) and type(a) is type(b) and a == b:  # C speed, identity first
            return True
        if isinstance(a, dict):
            return isinstance(b, dict) and a.keys() == b.keys() and all(self(a[k], b[k]) for k in a)
        if isinstance(a, (list, tuple)):
            return isinstance(b, (list, tuple)) and len(a) == len(b) and all(self(x, y) for x, y in zip(a, b))
        if type(a) is float and type(b) is float:
            if a != a:
                return b != b
            if a == 0.0 and b == 0.0 and self.signed_zero:
                return math.copysign(1.0, a) == math.copysign(1.0, b)
            return a == b
        if isinstance(a, (str, int, float, bool, bytes)) or a is None:
            return a == b and isinstance(a, bool) == isinstance(b, bool)
        key = (id(a), id(b))
        hit = self._seen.get(key)
        if hit is None:
            hit = self._seen[key] = bool(a == b)
            self._keep.append((a, b))
        return hit


def _metadata(cp: DecodedCheckpoint) -> dict[str, Any]:
    return {k: v for k, v in cp.metadata.items() if k not in _DROPPED_METADATA}


def same_checkpoint(a: DecodedCheckpoint, b: DecodedCheckpoint, eq: _Equal | None = None) -> bool:
    eq = eq or _Equal()
    return a.parent_checkpoint_id == b.parent_checkpoint_id and eq(a.checkpoint, b.checkpoint) and eq(_metadata(a), _metadata(b))


def same_write(a: DecodedWrite, b: DecodedWrite, eq: _Equal | None = None) -> bool:
    eq = eq or _Equal()
    return (a.task_path, a.channel) == (b.task_path, b.channel) and eq(a.value, b.value)


def differences(source: DecodedThread, target: DecodedThread, *, limit: int = 3, signed_zero: bool = True) -> list[str]:
    """What of the source the target lacks or holds differently (empty: the copy is verified).

    Content the target holds beyond the source is not a difference: a copy adds, never removes.
    """
    out: list[str] = []
    eq = _Equal(signed_zero)
    have = {(c.checkpoint_ns, c.checkpoint_id): c for c in target.checkpoints}
    for c in source.checkpoints:
        t = have.get((c.checkpoint_ns, c.checkpoint_id))
        if t is None:
            out.append(f"checkpoint {c.checkpoint_id} (ns '{c.checkpoint_ns}') missing in the target")
        elif not same_checkpoint(c, t, eq):
            out.append(f"checkpoint {c.checkpoint_id} (ns '{c.checkpoint_ns}') differs: {_what_differs(c, t, eq)}")
        if len(out) >= limit:
            return out
    have_w = {w.key: w for w in target.writes}
    for w in source.writes:
        t = have_w.get(w.key)
        if t is None:
            out.append(f"write {w.checkpoint_id}/{w.task_id}/{w.idx} (channel '{w.channel}') missing in the target")
        elif not same_write(w, t, eq):
            out.append(f"write {w.checkpoint_id}/{w.task_id}/{w.idx} (channel '{w.channel}') differs")
        if len(out) >= limit:
            return out
    return out


def _what_differs(a: DecodedCheckpoint, b: DecodedCheckpoint, eq: _Equal) -> str:
    if a.parent_checkpoint_id != b.parent_checkpoint_id:
        return "parent id"
    ma, mb = _metadata(a), _metadata(b)
    if not eq(ma, mb):
        keys = sorted(k for k in set(ma) | set(mb) if not eq(ma.get(k), mb.get(k)))
        return "metadata " + ", ".join(repr(k) for k in keys[:3])
    va, vb = a.checkpoint.get("channel_values") or {}, b.checkpoint.get("channel_values") or {}
    if not eq(va, vb):
        keys = sorted(k for k in set(va) | set(vb) if not eq(va.get(k), vb.get(k)))
        return "channel " + ", ".join(repr(k) for k in keys[:3])
    keys = sorted(k for k in set(a.checkpoint) | set(b.checkpoint) if not eq(a.checkpoint.get(k), b.checkpoint.get(k)))
    return "checkpoint field " + ", ".join(repr(k) for k in keys[:3])


# -- one thread


@dataclass
class ThreadOutcome:
    key: str
    status: str  # copied | skipped | conflict | failed (dry run: copy | skip | conflict | failed)
    checkpoints_copied: int = 0
    checkpoints_skipped: int = 0
    writes_copied: int = 0
    writes_skipped: int = 0
    rows_copied: int = 0  # same-kind copies: stored rows (PostgreSQL blobs included)
    verified: bool | None = None  # None: not checked (dry run, conflict, failure before writing)
    message: str | None = None

    @property
    def ok(self) -> bool:
        return self.status in (COPIED, SKIPPED, VERIFIED, "copy", "skip") and self.verified is not False

    def to_json(self) -> dict[str, Any]:
        return {
            "thread": self.key,
            "status": self.status,
            "checkpoints_copied": self.checkpoints_copied,
            "checkpoints_skipped": self.checkpoints_skipped,
            "writes_copied": self.writes_copied,
            "writes_skipped": self.writes_skipped,
            "verified": self.verified,
            "message": self.message,
        }


@dataclass
class Migrator:
    source: Store
    target: Store
    dry_run: bool = False
    verify: bool = True
    same_kind: bool = field(init=False)

    def __post_init__(self) -> None:
        self.same_kind = self.source.kind == self.target.kind
        # JSONB (PostgreSQL metadata and inline channel values) folds -0.0 into 0.
        self.signed_zero = "postgres" not in (self.source.kind, self.target.kind)

    def copy(self, key: str) -> ThreadOutcome:
        try:
            with shared_decoding():
                return self._copy(key)
        except MigrationConflict as exc:
            return ThreadOutcome(key, self._status(CONFLICT), message=f"changed in the target during the copy: {exc}; nothing written")
        except StoreError as exc:
            return ThreadOutcome(key, self._status(FAILED), message=exc.line())

    def verify_only(self, key: str) -> ThreadOutcome:
        try:
            with shared_decoding():
                src = self.source.decoded_thread(key)
                if not src.checkpoints:
                    return ThreadOutcome(key, FAILED, message="no such thread in the source")
                tgt = self.target.decoded_thread(key)
                diffs = differences(src, tgt, signed_zero=self.signed_zero)
        except StoreError as exc:
            return ThreadOutcome(key, FAILED, message=exc.line())
        out = ThreadOutcome(key, VERIFIED if not diffs else DIFFERS)
        out.verified = not diffs
        out.message = "; ".join(diffs) or None
        return out

    def _status(self, status: str) -> str:
        return DRY[status] if self.dry_run else status

    def _copy(self, key: str) -> ThreadOutcome:
        src = self.source.decoded_thread(key)
        if not src.checkpoints:
            return ThreadOutcome(key, self._status(FAILED), message="no such thread in the source")
        if not self.same_kind and src.blocked:
            what, classes = next(iter(sorted(src.blocked.items())))
            more = f" (and {len(src.blocked) - 1} more)" if len(src.blocked) > 1 else ""
            return ThreadOutcome(
                key,
                self._status(FAILED),
                message=f"refused: {what} holds {', '.join(classes)}{more}, which the strict decoder cannot "
                "rebuild exactly; copy it between stores of the same kind, where bytes are copied as stored",
            )
        if self.target.kind == "postgres" and not self.same_kind:
            where = _not_in_jsonb(src.checkpoints)
            if where:
                return ThreadOutcome(
                    key, self._status(FAILED),
                    message=f"refused: {where} holds a float NaN or Infinity, which PostgreSQL JSONB cannot store "
                    "(PostgresSaver's put fails on it); the thread was not copied",
                )
        # A thread the target does not hold yet (the common case) needs no decoded read; the
        # import still refuses, inside its transaction, anything that appeared meanwhile.
        if self.target.thread_summary(key) is None:
            existing = DecodedThread(key, [], [])
        else:
            existing = self.target.decoded_thread(key)
        eq = _Equal(self.signed_zero)
        cps_new, cps_skip, conflicts = _plan(
            src.checkpoints, {(c.checkpoint_ns, c.checkpoint_id): c for c in existing.checkpoints},
            lambda c: (c.checkpoint_ns, c.checkpoint_id), lambda a, b: same_checkpoint(a, b, eq),
        )
        ws_new, ws_skip, w_conflicts = _plan(
            src.writes, {w.key: w for w in existing.writes}, lambda w: w.key, lambda a, b: same_write(a, b, eq)
        )
        conflicts += w_conflicts
        out = ThreadOutcome(
            key, COPIED, len(cps_new), len(cps_skip), len(ws_new), len(ws_skip),
        )
        if conflicts:
            out.status = self._status(CONFLICT)
            out.checkpoints_copied = out.writes_copied = 0
            out.message = f"{conflicts[0]} already in the target with different content" + (
                f" (and {len(conflicts) - 1} more)" if len(conflicts) > 1 else ""
            ) + "; thread left unchanged"
            return out
        if not cps_new and not ws_new:
            out.status = self._status(SKIPPED)
            if not self.dry_run and self.verify:
                self._verify(src, out, existing)
            return out
        if self.dry_run:
            out.status = DRY[COPIED]
            return out
        if self.same_kind:
            self._copy_raw(key, out)
        else:
            self._copy_decoded(key, src, cps_new, ws_new, out)
        if out.status == COPIED and self.verify:
            self._verify(src, out)
        return out

    def _copy_raw(self, key: str, out: ThreadOutcome) -> None:
        exported = self.source.export_thread(key)
        have = {(r.table, r.key) for r in self.target.export_thread(key).rows}
        # The decoded plan found no conflict: a row already there (same key) is kept as the
        # target stores it; verification then proves the thread reads back equal.
        rows = [r for r in exported.rows if (r.table, r.key) not in have]
        self.target.import_rows(key, rows)
        out.rows_copied = len(rows)

    def _copy_decoded(self, key: str, src: DecodedThread, cps_new, ws_new, out: ThreadOutcome) -> None:
        versions = new_versions_in_order(src.checkpoints)
        by_id = {(c.checkpoint_ns, c.checkpoint_id): v for c, v in zip(src.checkpoints, versions)}
        try:
            write_batches(ws_new)
        except UnrebuildableWrites as exc:
            out.status = FAILED
            out.checkpoints_copied = out.writes_copied = 0
            out.message = f"refused: {exc}"
            return
        self.target.import_decoded(
            key, cps_new, ws_new, [by_id[(c.checkpoint_ns, c.checkpoint_id)] for c in cps_new]
        )

    def _verify(self, src: DecodedThread, out: ThreadOutcome, target: DecodedThread | None = None) -> None:
        if target is None:
            target = self.target.decoded_thread(src.key)
        diffs = differences(src, target, signed_zero=self.signed_zero)
        out.verified = not diffs
        if diffs:
            out.message = "verification failed: " + "; ".join(diffs)



def _non_finite(value: Any, depth: int = 0) -> bool:
    if type(value) is float:
        return not math.isfinite(value)
    if depth > 200:  # deeper than any JSON document PostgreSQL accepts; it refuses those itself
        return False
    if isinstance(value, dict):
        return any(_non_finite(v, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_non_finite(v, depth + 1) for v in value)
    return False


def _not_in_jsonb(checkpoints: list[DecodedCheckpoint]) -> str | None:
    """Where a checkpoint holds a non-finite float that PostgresSaver would put into JSONB: its
    metadata, or a channel value it keeps inline (a plain float; other values go to blobs)."""
    for cp in checkpoints:
        for k, v in _metadata(cp).items():
            if _non_finite(v):
                return f"checkpoint {cp.checkpoint_id} (ns '{cp.checkpoint_ns}') metadata {k!r}"
        for k, v in (cp.checkpoint.get("channel_values") or {}).items():
            if type(v) is float and not math.isfinite(v):
                return f"checkpoint {cp.checkpoint_id} (ns '{cp.checkpoint_ns}') channel {k!r}"
    return None


def _plan(items, existing: dict, key_of: Callable, same: Callable) -> tuple[list, list, list[str]]:
    new, skip, conflicts = [], [], []
    for item in items:
        k = key_of(item)
        old = existing.get(k)
        if old is None:
            new.append(item)
        elif same(item, old):
            skip.append(item)
        else:
            conflicts.append(_describe(item))
    return new, skip, conflicts


def _describe(item) -> str:
    if isinstance(item, DecodedCheckpoint):
        return f"checkpoint {item.checkpoint_id} (ns '{item.checkpoint_ns}')"
    return f"write {item.checkpoint_id}/{item.task_id}/{item.idx} (channel '{item.channel}')"


def run(migrator: Migrator, keys: list[str], *, verify_only: bool = False,
        on_thread: Callable[[ThreadOutcome], None] | None = None) -> Iterator[ThreadOutcome]:
    for key in keys:
        outcome = migrator.verify_only(key) if verify_only else migrator.copy(key)
        if on_thread is not None:
            on_thread(outcome)
        yield outcome


def totals(outcomes: list[ThreadOutcome]) -> dict[str, int]:
    counts = {"threads": len(outcomes), COPIED: 0, SKIPPED: 0, CONFLICT: 0, FAILED: 0, VERIFIED: 0}
    dry = {v: k for k, v in DRY.items()}
    for o in outcomes:
        status = dry.get(o.status, o.status)
        if status != VERIFIED:  # counted from the flag below
            counts[status] = counts.get(status, 0) + 1
        if o.verified:
            counts[VERIFIED] += 1
    counts["checkpoints_copied"] = sum(o.checkpoints_copied for o in outcomes)
    counts["writes_copied"] = sum(o.writes_copied for o in outcomes)
    return counts


# -- several threads at a time (--jobs N): separate processes, each thread still one transaction

CHUNK = 16  # threads per task sent to a worker: amortizes the round trip between processes

_worker: dict[str, Any] = {}


def run_parallel(src_loc, dst_loc, src_options: dict, dst_options: dict, keys: list[str], *, jobs: int,
                 dry_run: bool, verify_only: bool,
                 on_thread: Callable[[ThreadOutcome], None] | None = None) -> list[ThreadOutcome]:
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
        initargs=(os.getpid(), src_loc, dst_loc, src_options, dst_options, dry_run, not (dry_run or verify_only)),
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


def _worker_open(parent: int, src_loc, dst_loc, src_options: dict, dst_options: dict, dry_run: bool, writable: bool) -> None:
    import atexit

    from symfonic_cli.stores import open_store

    _die_with_parent(parent)
    source = open_store(src_loc, writable=False, **src_options)
    target = open_store(dst_loc, writable=writable, **dst_options)
    _worker["migrator"] = Migrator(source, target, dry_run=dry_run)
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
