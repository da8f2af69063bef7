"""``thread prune``'s keep rules, the pure part: one thread's checkpoints in, what goes out. No I/O.

The rules are ``PostgresSaver.prune(strategy="keep_latest")``'s (langgraph-checkpoint-postgres
3.2), for every store kind, with ``--keep N`` and ``--older-than`` as the generalisation:

- each namespace keeps its latest ``keep`` checkpoints (the saver's own order, the one
  ``get_tuple`` loads first: the greatest checkpoint id), those newer than ``newer_than`` (by
  instant, ``clock.checkpoint_time``: an undatable checkpoint is never old), and the
  parent of a kept latest one that predates checkpoint format v4 and has pending sends (they are
  read from the parent's ``__pregel_tasks`` writes);
- a subgraph call's namespace (a task id after a ``:``) goes whole with the root checkpoint its
  call started from (``metadata.parents[""]``), once that one is saved and not kept; a
  ``checkpointer=True`` subgraph's namespace (no ``:``) keeps its own latest;
- a kept checkpoint whose parent goes is left with no parent;
- DeltaChannel threads (``counters_since_delta_snapshot`` in metadata) also keep every ancestor
  back to the nearest one holding a value (a ``_DeltaSnapshot``) of each delta channel, so that
  ``get_delta_channel_history`` rebuilds the same value; where that cannot be established the
  thread is skipped, untouched (PostgresSaver refuses such threads outright).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from symfonic_cli.clock import checkpoint_time, joined_ordered, last_activity, ordered_id_time

TASKS = "__pregel_tasks"  # langgraph.constants.TASKS: the channel pending Sends are written to
SENDS_IN_PARENT_BEFORE = 4  # checkpoints before format v4 read their pending sends from the parent

PRUNED, NOTHING, SKIPPED, FAILED = "pruned", "nothing-to-prune", "skipped", "failed"
NOT_FOUND, NOT_ATTEMPTED = "not-found", "not-attempted"
BUSY = "busy"  # a lock not had within --lock-timeout: rolled back, nothing changed; a rerun takes it
STATUSES = (PRUNED, NOTHING, SKIPPED, FAILED, NOT_FOUND, NOT_ATTEMPTED, BUSY)


class PruneCheckpoint(NamedTuple):  # a tuple: one is made per checkpoint a plan reads
    """What the rules need of one stored checkpoint (metadata only, nothing decoded)."""

    ns: str
    id: str
    parent: str | None
    root: str | None  # metadata["parents"][""]: the root checkpoint a subgraph call started from
    delta: frozenset[str] = frozenset()  # the channels counters_since_delta_snapshot names
    js_delta: bool = False  # delta_writes_versioned: a LangGraph.js DeltaChannel thread
    ts: str | None = None  # the checkpoint's own ts, where its id carries no time (clock.checkpoint_time)


# (ns, checkpoint id) -> (format version, names of the channels holding a value), None: unreadable
Outline = Callable[[str, str], "tuple[int | None, frozenset[str]] | None"]


@dataclass
class PruneDecision:
    key: str
    keep: dict[str, set[str]] = field(default_factory=dict)  # kept checkpoint ids per namespace
    delete: dict[str, list[str]] = field(default_factory=dict)  # checkpoint ids deleted per kept namespace
    drop: dict[str, int] = field(default_factory=dict)  # namespaces deleted whole -> their checkpoints
    detach: dict[str, list[str]] = field(default_factory=dict)  # kept ids left with no parent
    delta_ancestors: int = 0  # checkpoints kept only because a DeltaChannel is rebuilt from them
    total: int = 0  # the thread's checkpoints, kept or not
    skipped: str | None = None
    oldest_kept_root: str | None = None  # the root namespace's oldest kept checkpoint
    newest_deleted_root: str | None = None  # the newest root checkpoint deleted before it
    # Forks (LangGraph time travel: update_state on an older checkpoint): branch heads (checkpoints
    # no other checkpoint of the namespace names as parent) of the namespaces with more than one.
    branch_heads: int = 0
    branch_heads_deleted: int = 0
    # What a piece of a huge thread's prune (piece_of) needs: each kept namespace's checkpoints
    # (id -> parent), and the root checkpoint each namespace deleted whole was called from.
    parents: dict[str, dict[str, str | None]] = field(default_factory=dict)
    drop_roots: dict[str, str | None] = field(default_factory=dict)
    # The thread's last activity as listing reads it (clock.py: the UUIDv6 time in any case, else
    # its ts) over every checkpoint; ``undatable``: one carries neither.
    last_at: datetime | None = None
    undatable: bool = False

    @property
    def checkpoints(self) -> int:
        return sum(len(v) for v in self.delete.values()) + sum(self.drop.values())

    @property
    def kept_detached(self) -> int:
        """Kept checkpoints left with no parent (a piece also cuts checkpoints a later piece deletes)."""
        return sum(1 for ns, ids in self.detach.items() for i in ids if i in self.keep.get(ns, ()))

    @property
    def changes(self) -> bool:
        return bool(self.checkpoints or any(self.detach.values()))


def decide(key: str, checkpoints: list[PruneCheckpoint], sends_at: set[tuple[str, str]], outline: Outline, *,
           keep: int = 1, newer_than: datetime | None = None, keep_branches: bool = False,
           ordered: bool | None = None) -> PruneDecision:
    """What pruning ``key`` deletes, keeps and detaches; ``sends_at`` holds the (ns, id) of the
    checkpoints with a ``__pregel_tasks`` write; ``outline`` is asked only where a rule needs it.
    Keep-latest keeps the newest branch only, as PostgresSaver.prune does; ``keep_branches`` also
    keeps the head of every branch (a checkpoint no other checkpoint of its namespace names as parent).
    ``ordered``: ``all_ordered(checkpoints)`` when the caller has tested it (else tested here)."""
    d = PruneDecision(key, total=len(checkpoints))
    d.last_at, d.undatable = _last_activity(checkpoints, all_ordered(checkpoints) if ordered is None else ordered)
    by_ns: dict[str, list[PruneCheckpoint]] = {}
    for c in checkpoints:
        by_ns.setdefault(c.ns, []).append(c)
    for cps in by_ns.values():
        cps.sort(key=lambda c: c.id, reverse=True)  # the saver's ORDER BY checkpoint_id DESC
    heads = {ns: _heads(cps) for ns, cps in by_ns.items()}
    for ns, cps in by_ns.items():
        kept_cps = cps[:keep] + ([c for c in cps[keep:] if c.id in heads[ns]] if keep_branches else [])
        kept = [c.id for c in kept_cps]
        if newer_than is not None:
            kept += [c.id for c in cps[keep:] if _newer(c, newer_than)]
        for c in kept_cps:
            if c.parent is not None and (ns, c.parent) in sends_at:
                shape = outline(ns, c.id)
                # unreadable: kept, as the safe side of the rule
                if shape is None or shape[0] is None or shape[0] < SENDS_IN_PARENT_BEFORE:
                    kept.append(c.parent)
        d.keep[ns] = set(kept)
    roots = {c.id for c in by_ns.get("", [])}
    for ns, cps in by_ns.items():
        root = cps[0].root
        if ":" in ns and root is not None and root in roots and root not in d.keep.get("", ()):
            d.drop[ns] = len(cps)
            d.drop_roots[ns] = root
    if any(c.delta or c.js_delta for c in checkpoints):
        d.skipped = _keep_delta_ancestors(d, by_ns, outline)
        if d.skipped:
            return d
    for ns, cps in by_ns.items():
        if ns in d.drop:
            continue
        kept_ids = d.keep[ns]
        if len(heads[ns]) > 1:
            d.branch_heads += len(heads[ns])
            d.branch_heads_deleted += len(heads[ns] - kept_ids)
        d.delete[ns] = [c.id for c in cps if c.id not in kept_ids]
        d.parents[ns] = {c.id: c.parent for c in cps}
        d.detach[ns] = sorted(c.id for c in cps if c.id in kept_ids and c.parent is not None and c.parent not in kept_ids)
    root_cps = by_ns.get("", [])
    kept_root = [c.id for c in root_cps if c.id in d.keep.get("", ())]
    if kept_root:
        d.oldest_kept_root = min(kept_root)
        older = [i for i in d.delete.get("", []) if i < d.oldest_kept_root]
        d.newest_deleted_root = max(older) if older else None
    return d


def piece_of(d: PruneDecision, limit: int) -> PruneDecision:
    """The first piece of a prune too big for one transaction: at most ``limit`` checkpoints (a
    subgraph call's namespace goes whole, even past it), oldest first in the saver's order, each
    namespace deleted whole just before the root checkpoint its call started from (so a rerun
    decides the same). What is left stays as LangGraph read it, with fewer old checkpoints: a
    remaining checkpoint whose parent goes in this piece is left with no parent (the rule of the
    whole prune), the others keep theirs, and ``keep`` is the whole prune's, compared before and
    after each piece. ``d`` itself when it fits."""
    if d.checkpoints <= limit:
        return d
    by_root: dict[str | None, list[str]] = {}
    for ns, root in d.drop_roots.items():
        by_root.setdefault(root, []).append(ns)
    units: list[tuple[str, str | None]] = []  # (ns, id), id None: the namespace whole
    root_ids = list(reversed(d.delete.get("", [])))  # d.delete lists the saver's order, newest first
    placed = set(root_ids)
    units += [(ns, None) for root, names in by_root.items() if root not in placed for ns in sorted(names)]
    for rid in root_ids:
        units += [(ns, None) for ns in sorted(by_root.get(rid, ()))]
        units.append(("", rid))
    units += [(ns, i) for ns, ids in d.delete.items() if ns for i in reversed(ids)]
    p = PruneDecision(d.key, keep=d.keep, delete={ns: [] for ns in d.delete}, total=d.total, parents=d.parents,
                      last_at=d.last_at, undatable=d.undatable)
    n = 0
    for ns, cid in units:
        size = d.drop[ns] if cid is None else 1
        if n and n + size > limit:
            break
        n += size
        if cid is None:
            p.drop[ns] = d.drop[ns]
        else:
            p.delete[ns].append(cid)
    for ns, ids in p.delete.items():
        gone = set(ids)
        p.detach[ns] = sorted(i for i, parent in d.parents.get(ns, {}).items() if i not in gone and parent in gone)
    return p


def _last_activity(checkpoints: list[PruneCheckpoint], ordered: bool) -> tuple[datetime | None, bool]:
    """The thread's last activity by instant and whether a checkpoint is undatable: from the
    greatest id when every id is in the ordered form (``all_ordered``), else checkpoint by checkpoint."""
    if ordered:
        return (ordered_id_time(max(c.id for c in checkpoints)) if checkpoints else None), False
    return last_activity((c.id, c.ts) for c in checkpoints)


def all_ordered(checkpoints: list[PruneCheckpoint]) -> bool:
    """Whether every id is in the ordered form (clock.is_ordered_id), in one pass over the joined ids."""
    ids = [c.id for c in checkpoints]
    return all(type(i) is str for i in ids) and joined_ordered(",".join(ids), len(ids))


def _heads(cps: list[PruneCheckpoint]) -> set[str]:
    """The heads of a namespace's branches: checkpoints no other checkpoint names as parent."""
    named = {c.parent for c in cps if c.parent is not None}
    return {c.id for c in cps if c.id not in named}


def _newer(c: PruneCheckpoint, bound: datetime) -> bool:
    """Kept by ``--older-than``: dated as listing and erase date it (the UUIDv6 time in any case,
    else its ``ts``); a checkpoint that carries no time is never old."""
    t = checkpoint_time(c.id, c.ts)
    return t is None or t > bound


def _keep_delta_ancestors(d: PruneDecision, by_ns: dict[str, list[PruneCheckpoint]], outline: Outline) -> str | None:
    """Add to ``d.keep`` every ancestor a kept checkpoint's delta channels are rebuilt from; the
    reason the thread must be left alone, or None."""
    for ns, cps in by_ns.items():
        if ns in d.drop:
            continue
        if any(c.js_delta for c in cps) and not any(c.delta for c in cps):
            return "a LangGraph.js DeltaChannel thread (delta_writes_versioned) whose delta channels cannot be told: left as it is"
        channels = frozenset().union(*(c.delta for c in cps))
        if not channels:
            continue
        parent = {c.id: c.parent for c in cps}
        kept = d.keep[ns]
        walked: set[str] = set()
        for start in sorted(kept & parent.keys(), reverse=True):
            cur, need = start, set(channels)
            while need:
                if cur in walked and cur != start:
                    break  # an ancestor already walked from a newer kept checkpoint holds the rest
                walked.add(cur)
                shape = outline(ns, cur)
                if shape is None:
                    return f"checkpoint {cur} cannot be read to find its DeltaChannel snapshots: left as it is"
                need -= shape[1]
                if not need:
                    break
                up = parent.get(cur)
                if up is None:
                    break  # the chain's root: the channel starts empty there, as LangGraph rebuilds it
                if up not in parent:
                    return (f"checkpoint {cur}'s parent {up} is missing, so DeltaChannel "
                            f"'{sorted(need)[0]}' cannot be rebuilt from what is kept: left as it is")
                if up not in kept:
                    kept.add(up)
                    d.delta_ancestors += 1
                cur = up
    return None


@dataclass
class ThreadPrunePlan:
    """What pruning one thread would do now, read without changing anything."""

    key: str
    rows: dict[str, int]  # table -> rows deleted (writes, blobs, checkpoints), in delete order
    bytes: int  # stored bytes of those rows, as the database measures them
    checkpoints_before: int
    detached: int
    delta_ancestors: int = 0
    skipped: str | None = None
    redated: int = 0  # messages whose transcript time moves to redated_to
    redated_to: str | None = None  # the ts of the oldest kept root checkpoint
    last_at: datetime | None = None  # the thread's last activity by instant (PruneDecision.last_at)
    branch_heads: int = 0  # a forked thread's branch heads (0: no fork)
    branch_heads_deleted: int = 0  # of them, the ones the prune deletes (--keep-branches keeps them)
    # The decision this plan was made from (not shown): what the plan counts next reuses it.
    decision: PruneDecision | None = field(default=None, repr=False, compare=False)
    # What prune_plans' ``reader`` made of the thread's message states in the plan's own read (None: not made).
    read: object = field(default=None, repr=False, compare=False)

    @property
    def total(self) -> int:
        return sum(self.rows.values())

    @property
    def changes(self) -> bool:
        return bool(self.total or self.detached)


def _undone(atomic: bool) -> str:
    return "rolled back, nothing deleted" if atomic else "NOT rolled back: this server has no transactions"


def check_against_plan(expected: dict[str, int] | None, deleted: dict[str, int], *, atomic: bool = True) -> None:
    """Inside the thread's transaction, before its commit: the rows it deletes must be the rows the
    plan showed, else raise (the caller rolls back)."""
    if expected is None or expected == deleted:
        return
    from symfonic_cli.errors import StoreError

    differ = [f"{t} {expected.get(t, 0)} planned, {n} found" for t, n in deleted.items() if n != expected.get(t, 0)]
    raise StoreError(f"changed since the plan ({'; '.join(differ)}): {_undone(atomic)}")


def check_kept_state(key: str, before: object, after: object, *, atomic: bool = True) -> None:
    """Inside the transaction: what LangGraph reads for every kept namespace (its latest checkpoint,
    channel values, versions, pending writes, and a DeltaChannel's ancestors) must be unchanged."""
    if before == after:
        return
    from symfonic_cli.errors import StoreError

    raise StoreError(f"thread '{key}': the kept state would change: {_undone(atomic)}")
