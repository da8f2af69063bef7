"""One thread's prune, in as many transactions as its size needs (issue #38 item 5).

A thread whose prune deletes more than ``--piece-size`` checkpoints (default 500) is pruned in
pieces, oldest checkpoints first (model/prune.py ``piece_of``), each piece one transaction with the
checks of a whole prune (the rules decided again on its snapshot, the kept state compared before
and after, a fresh plan finding exactly what the later pieces take) and committed. Between two
pieces: the piece's receipt line (on disk before the next piece), the pace's pause and the
replicas' lag (``Between``). Killed between two pieces, the thread is one LangGraph reads as before
with fewer old checkpoints, and the same command takes the rest: the rules decide again on what
is there, so the pieces add up to the one-transaction prune.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from symfonic_cli.changes.steps import Stopped
from symfonic_cli.errors import EXIT_INTERRUPTED, EXIT_UNEXPECTED, StoreError, SymfonicError, ThreadBusy
from symfonic_cli.model.prune import BUSY, FAILED, NOTHING, PRUNED, SKIPPED
from symfonic_cli.prune import records as pr

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.prune import PruneDecision
    from symfonic_cli.stores.protocol import Store

# Called after each piece but the last: (key, piece number, rows deleted, parents detached,
# checkpoints left); it records the piece and waits as between two threads.
Between = Callable[[str, int, dict[str, int], int, int], None]


# req: prune/run.py's PruneRequest (not imported: prune imports this module)
def lost_by(store: Store, key: str, req: Any, newer_than: datetime | None, decision: PruneDecision | None = None,
            views: Any = None) -> int:
    """The messages only the checkpoints this prune deletes hold (prune/lost.py); ``decision`` and
    ``views``: the plan's, when the caller has them."""
    from symfonic_cli.prune.lost import messages_only_in_deleted

    return messages_only_in_deleted(store, key, keep=req.keep, newer_than=newer_than, keep_branches=req.keep_branches,
                                    decision=decision, views=views)


def prune_one(store: Store, plan: Any, req: Any, newer_than: datetime | None,
              after_commit: Callable[[], None] | None = None,
              between: Between | None = None) -> tuple[pr.PruneOutcome, Stopped | None]:
    """One thread pruned, piece by piece when it is huge (the plan's rows compared inside the
    transaction when it fits in one), and verified: its outcome, and a stop when the run cannot go
    on (Ctrl-C, an unexpected error). A thread written between the commit and the verification is
    ``failed`` as committed, then written again (erase's exit 8), never as left as it was."""
    from symfonic_cli.stores._prune import ThreadSkipped

    stop = None
    lost = None
    total: dict[str, int] = {}
    detached = pieces = 0
    try:
        # The plan's decision (the transaction decides again and compares its deletes with the
        # plan's rows: a thread changed since is not pruned as planned), not one more read of it.
        lost = lost_by(store, plan.key, req, newer_than, getattr(plan, "decision", None))
        expected: dict[str, int] | None = plan.rows
        while True:
            deleted, n_detached, remaining, left = store.prune_piece(
                plan.key, keep=req.keep, newer_than=newer_than, keep_branches=req.keep_branches, expected=expected,
                piece=req.piece_size, after_commit=after_commit if not pieces else None)
            pieces += 1
            for t, n in deleted.items():
                total[t] = total.get(t, 0) + n
            detached += n_detached
            expected = None  # the plan's rows are those of the whole thread
            if not left:
                break
            if not sum(deleted.values()):  # never loop on a piece that deleted nothing
                raise StoreError(f"a piece deleted nothing with {left} checkpoint(s) still to prune")
            if between is not None:
                between(plan.key, pieces, deleted, n_detached, left)
    except ThreadSkipped as exc:
        result = pr.PruneOutcome(plan.key, SKIPPED, reason=exc.message)
    except ThreadBusy as exc:  # a lock not had within --lock-timeout: rolled back, reported, the run goes on
        result = pr.PruneOutcome(plan.key, BUSY, reason=_after_pieces(exc.line(), pieces))
    except SymfonicError as exc:
        result = pr.PruneOutcome(plan.key, FAILED, total, detached, reason=_after_pieces(exc.line(), pieces))
    except (Exception, KeyboardInterrupt) as exc:
        what = "interrupted" if isinstance(exc, KeyboardInterrupt) else f"unexpected {type(exc).__name__}: {exc}"
        result = pr.PruneOutcome(plan.key, FAILED, total, detached,
                                 reason=_after_pieces(f"{what}; the prune may or may not have committed, rerun to know", pieces))
        stop = Stopped(what, EXIT_INTERRUPTED if isinstance(exc, KeyboardInterrupt) else EXIT_UNEXPECTED)
    else:
        changed = bool(sum(total.values()) or detached)
        result = pr.PruneOutcome(plan.key, PRUNED if changed else NOTHING, total, detached, remaining,
                                 messages_only_in_deleted=lost if changed else None)
        if remaining:
            result.status, result.reason = FAILED, pr.written_again(total, remaining)
    result.pieces = pieces
    result.time = datetime.now(timezone.utc)
    return result, stop


def _after_pieces(reason: str, pieces: int) -> str:
    """A failure after some pieces committed says so: those checkpoints are gone, the rest is whole."""
    if not pieces:
        return reason
    return f"{reason} (after {pieces} piece(s) committed: the thread reads as before with fewer old checkpoints; rerun to take the rest)"
