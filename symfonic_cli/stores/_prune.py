"""``thread prune`` on every backend: the keep rules (model/prune.py) run on what a backend reads of
one thread, the plan and the verified one-transaction prune built once from the backend's few
primitives (``stores/<kind>/prune.py`` implements them):

- ``_pr_facts(key)``: the thread's checkpoints as PruneCheckpoint, and the (ns, id) holding a
  ``__pregel_tasks`` write;
- ``_pr_outline(key, ns, id)``: a checkpoint's format version and the channels it holds a value for;
- ``_pr_measure(key, decision)``: rows per table and stored bytes the decision deletes (counting);
- ``_pr_kept_state(key, decision)``: the stored rows LangGraph reads for what is kept (every kept
  checkpoint without its parent pointer, their writes, on PostgreSQL the blobs they reference);
- ``_pr_apply(key, decision)``: the deletes and parent updates, rows deleted per table;
- ``_pr_transaction()``: one transaction on one snapshot of the thread (a context manager);
- ``_pr_head(key, checkpoint_id)``: a root checkpoint's ``(ts, message count)``.
"""

from __future__ import annotations

from symfonic_cli.errors import SymfonicError

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime
    from typing import Any

    from symfonic_cli.model.prune import PruneDecision, ThreadPrunePlan


def _iso(ts):
    """A checkpoint's ``ts`` as every command prints a time (UTC, ``Z``); as stored when unreadable."""
    from datetime import datetime

    from symfonic_cli.clock import iso_utc

    try:
        return iso_utc(datetime.fromisoformat(ts)) if isinstance(ts, str) else None
    except ValueError:
        return ts


class ThreadSkipped(SymfonicError):
    """A thread the rules leave alone (a DeltaChannel that cannot be rebuilt): nothing changed."""

    exit_code = 0


class RulePrune:
    """prune_plan / prune_plans / prune_thread from the backend's primitives, declared here and
    defined by each backend's prune section (annotations only: nothing here shadows them)."""

    _pr_tables: Callable[[], tuple[str, ...]]  # the tables a prune deletes from
    _pr_transaction: Callable[[], Any]  # a context manager: the thread's one transaction
    _pr_facts: Callable[[str], tuple]  # (checkpoints, sends_at) of a thread
    _pr_outline: Callable[[str, str, str], Any]  # the DeltaChannel outline of one checkpoint
    _pr_head: Callable[[str, str], tuple]  # (time, message count) of one root checkpoint
    _pr_measure: Callable[[str, "PruneDecision"], tuple]  # (rows, bytes) the decision deletes
    _pr_kept_state: Callable[[str, "PruneDecision"], Any]  # the stored bytes LangGraph reads
    _pr_apply: Callable[[str, "PruneDecision"], dict]  # delete, rows per table

    def _pr_decide(self, key: str, keep: int, newer_than: datetime | None, keep_branches: bool = False) -> PruneDecision:
        checkpoints, sends_at = self._pr_facts(key)
        return self._pr_decide_on(key, checkpoints, sends_at, keep, newer_than, keep_branches)

    def _pr_decide_on(self, key: str, checkpoints: list, sends_at: set, keep: int, newer_than: datetime | None,
                      keep_branches: bool = False) -> PruneDecision:
        """The decision on facts already read (``_pr_facts``' two values)."""
        from symfonic_cli.model.prune import all_ordered, decide

        ordered = all_ordered(checkpoints)  # tested once: here and for the last activity
        if not ordered:
            checkpoints = self._pr_dated(key, checkpoints)  # --older-than and the plan's last activity
        outlines: dict = {}

        def outline(ns: str, cid: str) -> Any:
            if (ns, cid) not in outlines:
                outlines[(ns, cid)] = self._pr_outline(key, ns, cid)
            return outlines[(ns, cid)]

        return decide(key, checkpoints, sends_at, outline, keep=keep, newer_than=newer_than, keep_branches=keep_branches,
                      ordered=ordered)

    def _pr_dated(self, key: str, checkpoints: list) -> list:
        """The checkpoints with the ``ts`` of those whose id carries no time (read from their heads,
        as listing dates them); a head that cannot be read leaves its checkpoint undatable."""
        from symfonic_cli.clock import checkpoint_id_time

        if all(checkpoint_id_time(c.id) is not None or c.ts is not None for c in checkpoints):
            return checkpoints
        from symfonic_cli.stores.activity import every_form_heads

        iter_heads = every_form_heads(self)
        ts: dict[tuple[str, str], str | None] = {}
        try:
            for head in iter_heads(key):
                ts[(head.checkpoint_ns, head.checkpoint_id)] = head.ts
        except SymfonicError:
            pass
        return [c if c.ts is not None or checkpoint_id_time(c.id) is not None
                else c._replace(ts=ts.get((c.ns, c.id))) for c in checkpoints]

    def _pr_atomic(self) -> bool:
        """Whether the thread's transaction can roll back (MongoDB without transactions cannot)."""
        return True

    def prune_decision(self, key: str, *, keep: int = 1, newer_than: datetime | None = None, keep_branches: bool = False) -> PruneDecision:
        return self._pr_decide(key, keep, newer_than, keep_branches)

    def prune_plan(self, key: str, *, keep: int = 1, newer_than: datetime | None = None, keep_branches: bool = False, times: bool = True) -> ThreadPrunePlan:
        d = self._pr_decide(key, keep, newer_than, keep_branches)
        return self._pr_plan(key, d, ({}, 0) if d.skipped else self._pr_measure(key, d), times)

    def _pr_plan(self, key: str, d: PruneDecision, measured: tuple[dict[str, int], int], times: bool) -> ThreadPrunePlan:
        """The plan of a decision and its measure (rows per table, bytes)."""
        from symfonic_cli.model.prune import ThreadPrunePlan

        rows, size = measured
        plan = ThreadPrunePlan(
            key, rows, size, d.total, sum(len(v) for v in d.detach.values()), d.delta_ancestors, d.skipped,
            last_at=d.last_at, branch_heads=d.branch_heads, branch_heads_deleted=d.branch_heads_deleted, decision=d,
        )
        if times and not d.skipped and d.newest_deleted_root and d.oldest_kept_root:
            # Transcript times: a message is dated by the oldest checkpoint holding it; those the newest
            # deleted root checkpoint held are next held by the oldest kept one.
            _, count = self._pr_head(key, d.newest_deleted_root)
            ts, _ = self._pr_head(key, d.oldest_kept_root)
            plan.redated, plan.redated_to = count or 0, _iso(ts)
        return plan

    def prune_plans(self, keys: list[str], *, keep: int = 1, newer_than: datetime | None = None, keep_branches: bool = False, times: bool = True,
                    reader: Callable[[str, Any], object] | None = None) -> list[ThreadPrunePlan]:
        """``reader``: given each thread's message states where the plan's own read has them (a
        plan's ``read``; here none: the caller reads them itself)."""
        return [self.prune_plan(k, keep=keep, newer_than=newer_than, keep_branches=keep_branches, times=times) for k in keys]

    def prune_thread(self, key: str, *, keep: int = 1, newer_than: datetime | None = None, keep_branches: bool = False,
                     expected: dict[str, int] | None = None) -> tuple[dict[str, int], int]:
        """Prune ``key`` in ONE transaction on one snapshot: the rules decided again on that snapshot,
        the rows deleted compared with ``expected`` (the plan's) and the kept state read before and
        after the deletes compared, both before the commit; any difference rolls back. Returns
        (rows deleted per table, checkpoints left with no parent). ThreadSkipped: nothing changed."""
        deleted, detached, _ = self._prune_once(key, keep, newer_than, keep_branches, expected, None)
        return deleted, detached

    def _prune_once(self, key: str, keep: int, newer_than: datetime | None, keep_branches: bool,
                    expected: dict[str, int] | None, piece: int | None) -> tuple[dict[str, int], int, int]:
        """``prune_thread``, or with ``piece`` its first piece of at most that many checkpoints
        (model/prune.py piece_of; the plan's rows are then compared by the whole, not here).
        Returns (rows deleted, checkpoints left with no parent, checkpoints left for later pieces)."""
        from symfonic_cli.model.prune import check_against_plan, check_kept_state, piece_of

        with self._pr_transaction():
            whole = self._pr_decide(key, keep, newer_than, keep_branches)
            if whole.skipped:
                raise ThreadSkipped(whole.skipped)
            if not whole.changes:
                return dict.fromkeys(self._pr_tables(), 0), 0, 0
            d = piece_of(whole, piece) if piece is not None else whole
            left = whole.checkpoints - d.checkpoints
            if left:
                expected = None
            before = self._pr_kept_state(key, d)
            atomic = self._pr_atomic()
            if not atomic:  # nothing to roll back: compared right before the deletes instead
                check_against_plan(expected, self._pr_measure(key, d)[0])
            deleted = self._pr_apply(key, d)
            check_against_plan(expected, deleted, atomic=atomic)
            check_kept_state(key, before, self._pr_kept_state(key, d), atomic=atomic)
        return deleted, d.kept_detached, left

    def prune_remaining(self, key: str, *, keep: int = 1, newer_than: datetime | None = None, keep_branches: bool = False) -> int:
        """After the commit, a fresh plan: the checkpoints a prune would still delete (0: verified)."""
        return self._pr_decide(key, keep, newer_than, keep_branches).checkpoints

    def prune_verified(self, key: str, *, keep: int = 1, newer_than: datetime | None = None, keep_branches: bool = False,
                       expected: dict[str, int] | None = None,
                       after_commit: Callable[[], None] | None = None) -> tuple[dict[str, int], int, int]:
        """``prune_thread`` then the fresh plan's verification: (rows deleted per table, checkpoints
        left with no parent, checkpoints a prune would still delete). Here the fresh plan is read
        after the commit; a backend may read it inside the transaction, after the deletes, where a
        checkpoint still to prune rolls the thread back (PostgreSQL)."""
        deleted, detached, remaining, _ = self.prune_piece(key, keep=keep, newer_than=newer_than, keep_branches=keep_branches,
                                                           expected=expected, after_commit=after_commit)
        return deleted, detached, remaining

    def prune_piece(self, key: str, *, keep: int = 1, newer_than: datetime | None = None, keep_branches: bool = False,
                    expected: dict[str, int] | None = None, piece: int | None = None,
                    after_commit: Callable[[], None] | None = None) -> tuple[dict[str, int], int, int, int]:
        """``prune_verified`` of at most ``piece`` checkpoints (a huge thread in several
        transactions, oldest first): (rows deleted, checkpoints left with no parent, checkpoints a
        fresh plan still finds beyond the later pieces' (0: verified), checkpoints left for the
        later pieces (0: this was the last))."""
        deleted, detached, left = self._prune_once(key, keep, newer_than, keep_branches, expected, piece)
        if after_commit is not None:
            after_commit()  # the tests' fault hook: a writer gets the thread here
        remaining = self.prune_remaining(key, keep=keep, newer_than=newer_than, keep_branches=keep_branches)
        return deleted, detached, max(remaining - left, 0), left
