"""Last activity by instant, on every backend: the listing, a sweep's pages and its count.

Each backend answers in its database for the threads whose checkpoint ids are all in the one form
whose string order is time order (clock.is_ordered_id: there ``max(checkpoint_id)`` is the last
activity and a cut-off is an id bound), and flags every other thread ``odd`` (an upper-case UUIDv6,
an ISO 8601 string as very old LangGraph wrote, anything else). Those are decided here, checkpoint
by checkpoint, from the id's time or the checkpoint's ``ts`` (clock.checkpoint_time); a thread
with a checkpoint that carries neither is undatable: listed (``undatable``), never in a sweep.

A backend provides:

- ``_thread_rows(tenant, sub_tenant, limit, last_before, last_from)``: ThreadSummary rows, the
  odd ones first (in no set order, whatever the bounds), then at most ``limit`` of the others
  inside the bounds, newest ``max(id)`` first (then key), ordered and bounded by the database and
  streamed: only the odd rows are held. Without a limit every odd thread comes; with one, at
  least every odd thread whose exact activity can put it among the first ``limit`` rows: one the
  backend proves comes after them (undatable, or dated before the ``limit``-th plain row or the
  ``limit``-th dated odd one, or outside the bounds) may be left out, so ``list_threads`` shows
  the same page either way. An odd row may come dated
  (``last_at`` or ``undatable`` set) by the exact rule;
- ``_window_page(tenant, sub_tenant, last_before, last_from, after, limit, odd, upto=None)``: keys
  after ``after`` (and up to ``upto``) in byte order, of the non-odd threads inside the bounds
  (``odd=False``) or of every odd thread (``odd=True``);
- ``_window_tally(tenant, sub_tenant, last_before, last_from)``: how many non-odd threads are
  inside the bounds;
- ``_keys_heads(keys)``: ``(key, checkpoint_id, ts)`` of every checkpoint of those threads in one
  read (``ts`` may be left None where the id holds a time), or None where it cannot (then each
  thread is read alone);
- ``iter_checkpoint_heads(key)`` (the protocol's), for each checkpoint's id and ``ts``; a backend
  whose keys can be stored in more than one form (SQLite: text or a BLOB of the key's bytes) also
  gives ``_every_form_heads(key)``, the heads of every row an erase or prune of the key touches.
"""

from __future__ import annotations

from symfonic_cli import clock
from symfonic_cli.model.listing import ThreadSummary

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

_ODD_PAGE = 200
_BATCH = 500  # odd threads whose checkpoints are read in one query


def in_window(last, undatable: bool, last_before: str | None, last_from: str | None) -> bool:
    """The window test by instant; a bound is ``clock.id_at`` of its cut-off, whose time it holds.
    No bound (prune --all, a tenant's every session) keeps every thread, undatable ones too: only a
    time window cannot judge them."""
    if last_before is None and last_from is None:
        return True
    if undatable or last is None:
        return False
    if last_before is not None and not last < clock.bound_time(last_before):
        return False
    return last_from is None or not last < clock.bound_time(last_from)


class ExactActivity:
    """Activity by instant (first in each store's MRO). The backend's read section defines the
    primitives declared here (annotations only, so nothing here shadows them)."""

    iter_checkpoint_heads: Callable[[str], Iterator[Any]]  # ReadProtocol
    _thread_rows: Callable[..., Iterator[ThreadSummary]]  # the listing's rows, ids as stored
    _window_page: Callable[..., list[str]]  # a page of keys whose last id is in a window
    _window_tally: Callable[..., int]  # how many keys' last id is in a window
    _keys_heads: Callable[..., list[tuple] | None]  # the heads of a batch of threads, or None

    def thread_activity(self, key: str) -> tuple:
        """``(first, last, undatable)`` of a thread: its earliest and latest checkpoint times over
        every namespace, and whether a checkpoint carries no time at all."""
        from symfonic_cli.errors import StoreError

        first = last = None
        undatable = False
        heads = every_form_heads(self)
        try:
            for head in heads(key):
                t = clock.checkpoint_time(head.checkpoint_id, head.ts)
                if t is None:
                    undatable = True
                    continue
                first = t if first is None or t < first else first
                last = t if last is None or t > last else last
        except StoreError:
            # A checkpoint of an unexpected shape: its time cannot be told, so neither can the
            # thread's (listed with a warning, never swept); the commands that read it name it.
            undatable = True
        return first, last, undatable

    def _dated_odd(self, rows: list[ThreadSummary]) -> list[ThreadSummary]:
        """The odd rows with their exact activity: as the backend dated them (``_thread_rows`` may,
        by the same rule), else from the id where it decides it, else their checkpoints read a
        batch of threads at a time where the backend can (``_keys_heads``)."""
        out: list[ThreadSummary] = []
        need: list[ThreadSummary] = []
        for t in rows:
            if t.last_at is not None or t.undatable:  # dated by the backend in its listing's pass
                out.append(t)
                continue
            d = self._from_id(t)
            (need if d is None else out).append(t if d is None else d)
        for i in range(0, len(need), _BATCH):
            chunk = need[i:i + _BATCH]
            heads = self._keys_heads([t.key for t in chunk])
            if heads is None:  # no batch read here: thread by thread
                out += [t._replace(**dict(zip(("first_at", "last_at", "undatable"), self.thread_activity(t.key)))) for t in chunk]
                continue
            times: dict[str, list[Any]] = {t.key: [] for t in chunk}
            for key, cid, ts in heads:
                if key in times:  # the rule of thread_activity, checkpoint by checkpoint
                    times[key].append(clock.checkpoint_time(cid, ts))
            for t in chunk:
                dated = [at for at in times[t.key] if at is not None]
                out.append(t._replace(first_at=min(dated, default=None), last_at=max(dated, default=None),
                                      undatable=len(dated) < len(times[t.key])))
        return out

    @staticmethod
    def _from_id(t: ThreadSummary) -> ThreadSummary | None:
        """One checkpoint whose id holds a time (a UUIDv6 in any letter case): that time is its
        activity, as thread_activity would read it, without reading the checkpoint."""
        if t.checkpoints == 1 and t.first_checkpoint_id == t.last_checkpoint_id:
            at = clock.checkpoint_id_time(t.last_checkpoint_id)
            if at is not None:
                return t._replace(first_at=at, last_at=at, undatable=False)
        return None

    def _exact_summary(self, t: ThreadSummary) -> ThreadSummary:
        if not t.odd:  # every id in the ordered form: built whole (a listing runs this per thread)
            key, n, first_id, last_id = t[:4]
            return ThreadSummary(key, n, first_id, last_id, False, clock.ordered_id_time(first_id), clock.ordered_id_time(last_id), False)
        d = self._from_id(t)
        if d is not None:
            return d
        first, last, undatable = self.thread_activity(t.key)
        return t._replace(first_at=first, last_at=last, undatable=undatable)

    def _exact_ids(self, key: str, first_id, last_id, odd: bool | None) -> tuple:
        """``(first, last, undatable)`` for a row that gives its min and max ids and ``odd`` (whether
        the backend found an id not in the ordered form among all of them; None: not tested): from
        the min and max only when every id is ordered, else checkpoint by checkpoint. The min and
        max alone cannot tell: an upper-case-lettered UUIDv6 can sort between two ordered ids and
        be the latest (tests/threads/test_activity_instant.py)."""
        if first_id is None and last_id is None:
            return None, None, False
        if odd is False and clock.is_ordered_id(first_id) and clock.is_ordered_id(last_id):
            return clock.checkpoint_id_time(first_id), clock.checkpoint_id_time(last_id), False
        return self.thread_activity(key)

    def thread_summary(self, key: str):
        t = super().thread_summary(key)  # type: ignore[misc]
        if t is None:
            return None
        # The backends test every id (``odd``): the least and greatest alone would miss an id in
        # another form sorting between them (tests/threads/test_activity_instant.py).
        first, last, undatable = self._exact_ids(key, t.first_checkpoint_id, t.last_checkpoint_id, bool(t.odd))
        return t._replace(first_at=first, last_at=last, undatable=undatable)

    def erase_plan(self, key: str, extra):
        return self._exact_plan(super().erase_plan(key, extra))  # type: ignore[misc]

    def erase_plans(self, keys: list[str], extra) -> list:
        return [self._exact_plan(p) for p in super().erase_plans(keys, extra)]  # type: ignore[misc]

    def _exact_plan(self, plan):
        """A plan's first and last activity by instant (what the plan prints and grace judges)."""
        import dataclasses

        if plan.first_at is not None or plan.undatable:
            return plan  # already (erase_plans built on erase_plan)
        first, last, undatable = self._exact_ids(plan.key, plan.first_checkpoint_id, plan.last_checkpoint_id, plan.odd)
        return dataclasses.replace(plan, first_at=first, last_at=last, undatable=undatable)

    def list_threads(self, *, tenant: str | None = None, sub_tenant: str | None = None, limit: int | None = None,
                     last_before: str | None = None, last_from: str | None = None):
        """Newest last activity first (then key), each row with its exact ``first_at``/``last_at``;
        with bounds, the threads whose last activity is inside them, and every undatable thread
        (its ``undatable`` set: the caller warns), after the others."""
        if limit == 0:
            return
        bounded = last_before is not None or last_from is not None
        # One pass: the odd rows first (those that can be on the page), then its plain rows.
        rows = self._thread_rows(tenant, sub_tenant, limit, last_before, last_from)
        odd_rows, first_plain = [], None
        for t in rows:
            if not t.odd:
                first_plain = t
                break
            odd_rows.append(t)
        odd = self._dated_odd(odd_rows)
        if bounded:
            odd = [t for t in odd if t.undatable or in_window(t.last_at, False, last_before, last_from)]
        dated = sorted((t for t in odd if t.last_at is not None), key=lambda t: t.key)
        dated.sort(key=lambda t: t.last_at, reverse=True)
        undatable = sorted((t for t in odd if t.last_at is None), key=lambda t: t.key)
        shown = 0

        def plain():
            if first_plain is not None:
                yield self._exact_summary(first_plain)
                for t in rows:
                    yield self._exact_summary(t)

        i = 0
        for t in plain():
            while i < len(dated) and (dated[i].last_at > t.last_at or dated[i].last_at == t.last_at and dated[i].key < t.key):
                yield dated[i]
                i += 1
                shown += 1
                if limit is not None and shown >= limit:
                    return
            yield t
            shown += 1
            if limit is not None and shown >= limit:
                return
        for t in dated[i:] + undatable:
            yield t
            shown += 1
            if limit is not None and shown >= limit:
                return

    def window_keys(self, *, tenant: str | None = None, sub_tenant: str | None = None, last_before: str | None = None,
                    last_from: str | None = None, after: str | None = None, limit: int = 500) -> list[str]:
        """One page of a retention sweep: up to ``limit`` keys after ``after`` (byte order) of the
        threads whose last activity is inside the bounds, by instant; undatable threads never."""
        plain = self._window_page(tenant, sub_tenant, last_before, last_from, after, limit, False)
        # Odd threads past the last plain key of a full page belong to a later page.
        ceiling = plain[-1] if len(plain) == limit else None
        odd: list[str] = []
        cursor = after
        while len(odd) < limit:
            page = self._window_page(tenant, sub_tenant, None, None, cursor, _ODD_PAGE, True, upto=ceiling)
            if last_before is None and last_from is None:
                odd += page  # no bounds: every thread is in, dated or not (no read per thread)
            else:
                for key in page:
                    first, last, undatable = self.thread_activity(key)
                    if in_window(last, undatable, last_before, last_from):
                        odd.append(key)
            if len(page) < _ODD_PAGE:
                break
            cursor = page[-1]
        return sorted(plain + odd, key=_byte_order)[:limit]

    def window_count(self, *, tenant: str | None = None, sub_tenant: str | None = None, last_before: str | None = None,
                     last_from: str | None = None) -> int:
        """How many threads ``window_keys`` pages through: counted in the database, plus the odd
        threads decided one by one."""
        n = self._window_tally(tenant, sub_tenant, last_before, last_from)
        if last_before is None and last_from is None:  # every odd thread is in: counted, not dated
            return n + sum(len(page) for page in self._odd_pages(tenant, sub_tenant))
        return n + sum(in_window(last, undatable, last_before, last_from) for last, undatable in self._odd_activity(tenant, sub_tenant))

    def window_undatable(self, *, tenant: str | None = None, sub_tenant: str | None = None) -> int:
        """How many threads under the prefix a time window cannot judge (a checkpoint without a
        time): never in ``window_keys``; a sweep's plan counts them apart."""
        return sum(undatable for _, undatable in self._odd_activity(tenant, sub_tenant))

    def _odd_activity(self, tenant: str | None, sub_tenant: str | None) -> Iterator[tuple]:
        """``(last, undatable)`` of every thread under the prefix whose ids the database cannot
        compare as times (decided here one by one), a page of keys at a time."""
        for page in self._odd_pages(tenant, sub_tenant):
            for key in page:
                _, last, undatable = self.thread_activity(key)
                yield last, undatable

    def _odd_pages(self, tenant: str | None, sub_tenant: str | None) -> Iterator[list[str]]:
        """The keys of every odd thread under the prefix, a page at a time."""
        cursor = None
        while True:
            page = self._window_page(tenant, sub_tenant, None, None, cursor, _ODD_PAGE, True)
            yield page
            if len(page) < _ODD_PAGE:
                return
            cursor = page[-1]


def every_form_heads(store: Any) -> Callable[[str], Iterator[Any]]:
    """The heads that date a thread: of every row its key matches in any stored form."""
    return getattr(store, "_every_form_heads", None) or store.iter_checkpoint_heads


def _byte_order(key: str) -> bytes:
    return key.encode("utf-8", "surrogateescape")


def odd_having(odd: str, latest: str, mark: str, last_before: str | None, last_from: str | None, which: str) -> tuple[str, list]:
    """The HAVING clause of an SQL backend (``odd``: its aggregate that is true when a group holds
    an id not in the ordered form; ``latest``: its ``max(checkpoint_id)``; ``mark``: the
    placeholder). ``which``: ``"rows"`` (odd groups, and the others inside the bounds), ``"plain"``
    (the others inside the bounds) or ``"odd"`` (odd groups only)."""
    if which == "odd":
        return f"HAVING {odd}", []
    conds, params = [], []
    if last_before is not None:
        conds.append(f"{latest} < {mark}")
        params.append(last_before)
    if last_from is not None:
        conds.append(f"{latest} >= {mark}")
        params.append(last_from)
    if which == "plain":
        return "HAVING " + " AND ".join([f"NOT {odd}", *conds]), params
    if not conds:
        return "", []
    return f"HAVING ({odd} OR ({' AND '.join(conds)}))", params
