"""``threads list --status``: each thread's status from its latest root checkpoint's version maps
and the per-task flags of its pending writes, both read in the database.

Only the small version maps are decoded: PostgreSQL reads them as JSONB; SQLite hands over the
last bytes of the msgpack blob (its last fields are ``channel_versions``, ``versions_seen`` and
``updated_channels``), read further back only when the ``channel_versions`` key is not in them;
the key is tried from the last occurrence backwards (message content, which an attacker may
write, comes before the real key), and the fields after it must end exactly where the blob ends;
MongoDB the same from the document's blob. The channels that
hold a trigger value are the checkpoint's ``updated_channels``, which LangGraph 1.x records: a
checkpoint without them, with pending Sends, or whose tail does not parse is read whole instead
(lean: no stored class is built).
"""

from __future__ import annotations

from datetime import datetime, timezone

# typing.TYPE_CHECKING without importing typing (the status listing loads this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.retention.window import ActivityWindow
    from symfonic_cli.stores.protocol import Store
    from symfonic_cli.model.thread_row import ThreadRunState


def _with_activity(store, r):
    """The row with its first and last activity by instant (clock.py): from the ids when both are
    in the ordered form, else checkpoint by checkpoint (stores/activity.py)."""
    from symfonic_cli import clock

    if r.odd is False:  # the store tested every id and set the times (stores/sqlite/state.py)
        return r
    if r.odd is None and clock.is_ordered_id(r.first_checkpoint_id) and clock.is_ordered_id(r.last_checkpoint_id):
        return r._replace(first_at=clock.checkpoint_id_time(r.first_checkpoint_id), last_at=clock.checkpoint_id_time(r.last_checkpoint_id))
    first, last, undatable = store.thread_activity(r.key)
    return r._replace(first_at=first, last_at=last, undatable=undatable)


# Sorts before every time: threads without one come last in a newest-first listing.
_NEVER = datetime.min.replace(tzinfo=timezone.utc)


def run_state_rows(
    store: Store,
    *,
    prefix: str | None,
    session: str | None,
    statuses: set[str] | None,
    sort: str,
    reverse: bool,
    with_size: bool,
    limit: int | None,
    window: ActivityWindow | None = None,
) -> list["ThreadRunState"]:
    """The listed threads, filtered and sorted; only the matching rows are kept in memory."""
    from symfonic_cli.threadkey import parse_key

    need_size = with_size or sort == "size"
    need_status = statuses is not None
    rows = store.iter_run_states(prefix=prefix, with_size=need_size, with_status=need_status, statuses=statuses)
    kept = []
    for r in rows:
        if session is not None:
            parts = parse_key(r.key)
            if parts is None or parts.session != session:
                continue
        if statuses is not None and r.status not in statuses:
            continue
        r = _with_activity(store, r)
        if window is not None and not (r.undatable or window.keeps(r.last_at)):
            continue  # a retention window (retention/window.py), by instant; undatable ones stay, warned
        kept.append(r)
    if sort == "last-activity":
        kept.sort(key=lambda r: r.key)
        kept.sort(key=lambda r: r.last_at or _NEVER, reverse=True)
    elif sort == "first-activity":
        kept.sort(key=lambda r: r.key)
        kept.sort(key=lambda r: r.first_at or _NEVER, reverse=True)
    elif sort == "checkpoints":
        kept.sort(key=lambda r: r.key)
        kept.sort(key=lambda r: r.checkpoints, reverse=True)
    else:
        kept.sort(key=lambda r: r.key)
        kept.sort(key=lambda r: r.size_bytes or 0, reverse=True)
    if reverse:
        kept.reverse()
    if limit is not None:
        kept = kept[:limit]
    return kept
