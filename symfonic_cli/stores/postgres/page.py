"""PostgreSQL's listing page in one statement: one pass over the table, one top-N sort, the rows
that can be on the page and no other.

Each thread is flagged ``odd`` when one of its ids is not in the ordered form (clock.is_ordered_id),
every id tested where the scan meets it (_common.is_ordered_id: no regex). Every thread then gets a rank, an
ordered-id-like string that is never below where the thread's exact instant can put it:

- a plain thread: its greatest id (its instant, ordered as LangGraph's ids order);
- an odd one of one checkpoint whose id holds a time (a UUIDv6 in any letter case): that time's
  microsecond rounded up, then "~" (above every ordered id of the same 60-bit prefix);
- an odd one of one checkpoint dated by its ``ts``: when the ``ts`` is in the strict form
  ``YYYY-MM-DDTHH:MM:SS[.f][Z|+00:00]``, the next whole second after it, likewise; no ``ts``: ""
  (undatable, after every dated thread); any other ``ts``, or several checkpoints: "~" (above all).

The page is the first rows by rank: a thread ranked below the ``limit``-th plain row cannot be
among the first ``limit`` rows by instant, so it is not sent; those sent are dated exactly by
stores/activity.py as before. A rank is an instant in 100 ns ticks, written as fixed-width hex
(so rank order is tick order), and only chooses which rows are sent: the listing's order and its
times are still decided by instant, by the exact rule (clock.py), in Python.
"""

from __future__ import annotations

from symfonic_cli.stores.postgres._common import is_ordered_id

# An id in which clock.checkpoint_id_time finds a time (a UUIDv6 in any letter case).
TIMED_ID = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-6[0-9a-fA-F]{3}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
# A ts whose instant is its fields read as UTC (what clock.ts_time gives it, or None for a date
# that does not exist: undatable, so never shown before a dated row).
_STRICT_TS = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]+)?(Z|[+]00:00)?$"  # no backslash
_MAX_TICKS = (1 << 60) - 1
# Days from 1582-10-15 (the UUID epoch) to 1970-01-01.
_EPOCH_DAYS = 141427


def _rank_of_ticks(ticks: str) -> str:
    """An ordered-id prefix of ``ticks`` (clamped to 60 bits) and "~": above every ordered id whose
    60-bit time is at most ``ticks``, below every one whose time is later."""
    h = f"lpad(to_hex(least(greatest({ticks}, 0), {_MAX_TICKS})), 15, '0')"
    return f"(SELECT substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-6' || substr(h, 13, 3) || '~' FROM (SELECT {h} AS h OFFSET 0) AS t)"


def _id_ticks(last: str) -> str:
    """The last tick of the microsecond in which a UUIDv6 id of any letter case was written."""
    hex15 = f"lower(substr({last}, 1, 8) || substr({last}, 10, 4) || substr({last}, 16, 3))"
    return f"(('x' || lpad({hex15}, 16, '0'))::bit(64)::bigint / 10 * 10 + 9)"


def _ts_ticks(ts: str) -> str:
    """The tick of the next whole second after a strict-form ``ts`` (days_from_civil in integers:
    no date function, so no error for a date that does not exist)."""
    y, m, d = (f"substr({ts}, {a}, {n})::int" for a, n in ((1, 4), (6, 2), (9, 2)))
    hh, mi, ss = (f"substr({ts}, {a}, 2)::bigint" for a in (12, 15, 18))
    yy = f"({y} - ({m} <= 2)::int)"
    era = f"({yy} / 400)"
    yoe = f"({yy} - {era} * 400)"
    doy = f"((153 * (({m} + 9) %% 12) + 2) / 5 + {d} - 1)"
    days = f"({era} * 146097 + {yoe} * 365 + {yoe} / 4 - {yoe} / 100 + {doy} - 719468 + {_EPOCH_DAYS})"
    return f"((({days})::bigint * 86400 + {hh} * 3600 + {mi} * 60 + {ss} + 1) * 10000000)"


def page_sql(key: str, where: str, inside: str, ts_read: bool) -> str:
    """The page's statement: rows ``(key, checkpoints, first id, last id, odd, rank)`` by rank,
    newest first; parameters: ``where``'s, ``inside``'s (the plain rows' bounds), then how many rows.
    ``ts_read``: a one-checkpoint odd thread's ``ts`` is read by its key (keys compare exactly)."""
    # One level: the aggregates named once each (the planner computes each once), the rank of
    # each group in the same projection as its row (no subquery scan over a million groups).
    n, last = "count(*)", 'max(checkpoint_id COLLATE "C")'
    odd = f'NOT bool_and({is_ordered_id("checkpoint_id")})'
    # No ts read (keys that fold): above all, read after; a ts read and missing: undatable.
    by_ts = "'~'"
    if ts_read:
        # The outer row's columns named by its alias t (unqualified, they would be the subquery's).
        ts = ("(SELECT c.checkpoint ->> 'ts' FROM checkpoints c WHERE c.thread_id = t.thread_id "
              "AND c.checkpoint_id = max(t.checkpoint_id COLLATE \"C\") LIMIT 1)")
        by_ts = (f"(SELECT CASE WHEN ts IS NULL THEN '' WHEN ts ~ '{_STRICT_TS}' THEN {_rank_of_ticks(_ts_ticks('ts'))} "
                 f"ELSE '~' END FROM (SELECT {ts} AS ts OFFSET 0) AS h)")
    rank = (f"CASE WHEN NOT {odd} THEN {last} WHEN {n} > 1 THEN '~' WHEN {last} ~ '{TIMED_ID}' "
            f"THEN {_rank_of_ticks(_id_ticks(last))} ELSE {by_ts} END")
    # The rank is sent (an ASCII string): the parts of a split page merge by it (merge_parts).
    return (
        f'SELECT {key}, {n}, min(checkpoint_id COLLATE "C"), {last}, {odd}, ({rank}) COLLATE "C" FROM checkpoints AS t {where} '
        f'GROUP BY {key} HAVING {odd} OR (true{inside}) ORDER BY 6 DESC, {key} COLLATE "C" LIMIT %s'
    )


def part_cuts(bounds: list[str], parts: int) -> list[str]:
    """Up to ``parts - 1`` keys cutting ``bounds`` (the statistics' equal-frequency histogram of
    the keys, sorted as the column sorts) into ``parts`` runs of about as many rows; ascending,
    distinct."""
    k = len(bounds) - 1
    cuts = [bounds[round(i * k / parts)] for i in range(1, parts)] if k > 0 else []
    return [c for i, c in enumerate(cuts) if i == 0 or c != cuts[i - 1]]


def merge_parts(parts: list[list[tuple]], asked: int) -> list[tuple]:
    """The first ``asked`` rows of the parts' rows, as the one statement over their union gives
    them (rank descending, then key in bytes): each part holds its own first ``asked``, and no
    thread is in two parts (a key range each)."""
    rows = [r for part in parts for r in part]
    rows.sort(key=lambda r: str(r[0]).encode("utf-8", "surrogateescape"))
    rows.sort(key=lambda r: r[5], reverse=True)  # ASCII: str order is the server's "C" order
    return rows[:asked]

