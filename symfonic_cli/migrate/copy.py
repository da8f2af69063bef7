"""``symfonic migrate``: copying threads between stores, and proving the copy.

Per thread: plan against what the target already holds (identical -> skip, different ->
conflict, nothing written), write the rest in one target transaction (raw rows between stores of
the same kind, the target saver's own ``put``/``put_writes`` between kinds), then read the
thread back from the target and compare it, decoded, with the source.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from symfonic_cli.codec.reuse import shared_decoding
from symfonic_cli.errors import StoreError, ThreadBusy
from symfonic_cli.kinds import KINDS
from symfonic_cli.migrate.compare import (
    _Equal,
    _metadata,
    differences,
    same_checkpoint,
    same_write,
)
from symfonic_cli.model.copy import (
    DecodedCheckpoint,
    DecodedThread,
    MigrationConflict,
    UnrebuildableWrites,
    new_versions_in_order,
    unwritable,
    write_batches,
)
from symfonic_cli.stores.protocol import Store

# Statuses of one thread in the summary.
COPIED, SKIPPED, CONFLICT, FAILED = "copied", "skipped", "conflict", "failed"
BUSY = "busy"  # the target's locks not had within --lock-timeout: nothing written, a rerun copies it
# --verify-only says whether the target holds the source's content.
VERIFIED, DIFFERS = "verified", "differs"
# --dry-run says what would happen instead.
DRY = {COPIED: "copy", SKIPPED: "skip", CONFLICT: "conflict", FAILED: "failed"}


# -- writes as put_writes batches


# -- decoding a whole thread fast, still strictly


# -- comparing decoded content


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
    to_plaintext: bool = False  # write decrypted values, never the source's stored (encrypted) bytes
    same_kind: bool = field(init=False)

    def __post_init__(self) -> None:
        self.same_kind = self.source.kind == self.target.kind and not self.to_plaintext
        # JSONB (PostgreSQL metadata and inline channel values) folds -0.0 into 0 (kinds/).
        self.signed_zero = not (KINDS[self.source.kind].jsonb or KINDS[self.target.kind].jsonb)

    def copy(self, key: str) -> ThreadOutcome:
        try:
            with shared_decoding():
                return self._copy(key)
        except MigrationConflict as exc:
            return ThreadOutcome(key, self._status(CONFLICT), message=f"changed in the target during the copy: {exc}; nothing written")
        except ThreadBusy as exc:
            return ThreadOutcome(key, BUSY, message=exc.line())
        except StoreError as exc:
            return ThreadOutcome(key, self._status(FAILED), message=exc.line())

    def verify_only(self, key: str) -> ThreadOutcome:
        try:
            with shared_decoding():
                src = self.source.decoded_thread(key)
                if not src.checkpoints:
                    return ThreadOutcome(key, FAILED, message="no such thread in the source")
                tgt = self.target.decoded_thread(key)
                odd = unwritable(src, identity=False) or unwritable(tgt, identity=False)
                if odd:
                    return ThreadOutcome(key, FAILED, message=f"refused: {odd}")
                diffs = differences(src, tgt, signed_zero=self.signed_zero)
        except StoreError as exc:
            return ThreadOutcome(key, FAILED, message=exc.line())
        out = ThreadOutcome(key, VERIFIED if not diffs else DIFFERS)
        out.verified = not diffs
        out.message = "; ".join(diffs + [m for m in [_beyond(src, tgt)] if m]) or None
        return out

    def _status(self, status: str) -> str:
        return DRY[status] if self.dry_run else status

    def _copy(self, key: str) -> ThreadOutcome:
        src = self.source.decoded_thread(key)
        if not src.checkpoints:
            return ThreadOutcome(key, self._status(FAILED), message="no such thread in the source")
        # Identity is what will be written: a row whose stored id is not its blob's is refused.
        odd = unwritable(src)
        if odd:
            return ThreadOutcome(key, self._status(FAILED), message=f"refused: {odd}; nothing of the thread written")
        if not self.same_kind and src.blocked:
            what, classes = next(iter(sorted(src.blocked.items())))
            more = f" (and {len(src.blocked) - 1} more)" if len(src.blocked) > 1 else ""
            return ThreadOutcome(
                key,
                self._status(FAILED),
                message=f"refused: {what} holds {', '.join(classes)}{more}, which the strict decoder cannot "
                "rebuild exactly; copy it between stores of the same kind, where bytes are copied as stored",
            )
        if KINDS[self.target.kind].jsonb and not self.same_kind:
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
            odd = unwritable(existing, identity=False)
            if odd:
                return ThreadOutcome(key, self._status(FAILED), message=f"refused: in the target, {odd}; nothing written")
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
        beyond = _beyond(src, existing)
        if not cps_new and not ws_new:
            out.status = self._status(SKIPPED)
            if not self.dry_run and self.verify:
                self._verify(src, out, existing)
            out.message = _joined(out.message, beyond)
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
        if out.status in (COPIED, DRY[COPIED]):
            out.message = _joined(out.message, beyond)
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
        if not diffs:
            diffs = _rebuilt_differences(self.source, self.target, src)
        out.verified = not diffs
        if diffs:
            out.message = "verification failed: " + "; ".join(diffs)


def _beyond(src: DecodedThread, target: DecodedThread) -> str | None:
    """What the target holds of the thread that the source does not (a copy never removes it)."""
    have = {(c.checkpoint_ns, c.checkpoint_id) for c in src.checkpoints}
    extra = [c for c in target.checkpoints if (c.checkpoint_ns, c.checkpoint_id) not in have]
    have_w = {w.key for w in src.writes}
    extra_w = sum(1 for w in target.writes if w.key not in have_w)
    if not extra and not extra_w:
        return None
    parts = []
    if extra:
        parts.append(f"{len(extra)} checkpoint{'s' if len(extra) != 1 else ''} ({extra[0].checkpoint_id}{', ...' if len(extra) > 1 else ''})")
    if extra_w:
        parts.append(f"{extra_w} write{'s' if extra_w != 1 else ''}")
    return f"the target holds more than the source: {' and '.join(parts)} not in the source"


def _joined(message: str | None, more: str | None) -> str | None:
    return "; ".join(m for m in (message, more) if m) or None


def _rebuilt_differences(source: Store, target: Store, src: DecodedThread) -> list[str]:
    """A delta-encoded ``messages`` channel: each checkpoint's rebuilt list, source against target."""
    if not any(isinstance(c.metadata.get("counters_since_delta_snapshot"), dict) and "messages" in c.metadata["counters_since_delta_snapshot"]
               for c in src.checkpoints):
        return []
    from symfonic_cli.stores.delta import ThreadMessages

    a, b = ThreadMessages.read(source, src.key), ThreadMessages.read(target, src.key)
    # MongoDBSaver replays a checkpoint's writes in the order the server lists them, the others in
    # writes_sort_key order: between the two, parallel writes may come back in another order.
    orderless = source.writes_replay_order != target.writes_replay_order
    eq = _Equal()
    out = []
    for c in src.checkpoints:
        where = (c.checkpoint_ns, c.checkpoint_id)
        va, vb = a.value_at(where), b.value_at(where)
        if orderless and va is not None and vb is not None:
            va, vb = sorted(va, key=_id_key), sorted(vb, key=_id_key)
        if not eq(va, vb):
            out.append(f"checkpoint {c.checkpoint_id} (ns '{c.checkpoint_ns}'): the rebuilt messages differ")
            if len(out) == 3:
                break
    return out


def _id_key(message: Any) -> str:
    from symfonic_cli.transcript.rows import message_id_of

    return message_id_of(message) or ""


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


