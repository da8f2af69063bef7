"""What ``thread prune`` prints for a reader: the plan (its head, a line per thread, the totals and
notes), the line per thread as it is done. The driver (prune/run.py) hands the plan over as a
``PruneView`` (prune/records.py) and each thread's outcome as a ``PruneOutcome``; every text taken
from the store is escaped here (``esc``: render.escape_inline) and wraps to a terminal's width."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from symfonic_cli.environment import Environment
from symfonic_cli.api.runs import NOT_FOUND, NOTHING, PRUNED, SKIPPED, TIMESTAMPS, PruneOutcome, PruneTotals, PruneView


def plan_head(view: PruneView, esc: Callable[[str], str], width: int | None, env: Environment) -> str:
    """What is kept, the selection and its count (a sweep's window as erase says it), and the
    threads a time window cannot date."""
    from symfonic_cli.cli.changes_text import idle_words
    from symfonic_cli.clock import human_duration
    from symfonic_cli.render.fit import Whole, fit

    # As typed (30d, not 2592000 s): the unit the grammar reads back; a sweep's window as erase's.
    older = ["and every checkpoint newer than", Whole(f"{human_duration(view.older_than)};")] if view.older_than else []
    receipt = view.selection
    window = idle_words(receipt, env) if "inactive_for" in receipt or "inactive_since" in receipt else []
    head = fit(["prune plan for", Whole(esc(view.store_name) + ":"), "keep the latest", Whole(f"{view.keep} checkpoint(s)"),
                "of each namespace" + ("," if older else ";"), *older, Whole(f"{view.total:,} thread(s)"),
                "selected" + ("," if window else ""), *window], width) + "\n"
    if view.undatable:
        head += fit(["undatable:", Whole(f"{view.undatable:,} thread(s)"), "whose activity cannot be dated:",
                     "not pruned by a time window"], width, indent="  ") + "\n"
    return head


def plan_totals(t: PruneTotals, width: int | None) -> str:
    line = totals_line(t.to_prune, t.checkpoints, t.bytes, t.redated, width) + "\n" + lost_line(t.lost, width) + "\n"
    if t.forked:
        from symfonic_cli.render.fit import Whole, fit

        line += fit(["forked:", Whole(f"{t.forked:,} thread(s)"), "lose", Whole(f"{t.heads_deleted:,} branch head(s)"),
                     "(LangGraph time travel; --keep-branches keeps every branch's head)"], width, indent="  ", hang="    ") + "\n"
    return line


def plan_notes(notes: list[str], esc: Callable[[str], str], width: int | None) -> str:
    from symfonic_cli.render.fit import fit

    return "".join(fit(["note:", esc(note)], width, indent="  ", hang="    ") + "\n" for note in notes)


def write_summary(out: TextIO, view: PruneView, env: Environment) -> None:
    """The plan a confirmation shows (or ``--yes`` on a reader's formats): the head, the first
    threads, how many more, the totals and the notes."""
    from symfonic_cli.render import escape_inline as esc
    from symfonic_cli.render.fit import Whole, fit, width_of

    width = width_of(out)
    out.write(plan_head(view, esc, width, env))
    for rec in view.sample:
        out.write(plan_line(rec, esc, width) + "\n")
    if view.total > len(view.sample):
        out.write(fit(["... and", Whole(f"{view.total - len(view.sample):,} more"), "(thread prune --dry-run lists every one)"],
                      width, indent="  ") + "\n")
    assert view.totals is not None  # a plan shown whole is counted
    out.write(plan_totals(view.totals, width))
    out.write(plan_notes(view.notes, esc, width))
    out.flush()


def plan_line(r: dict[str, Any], esc: Callable[[str], str], width: int | None = None) -> str:
    """One planned thread, wrapped under its key to ``width`` (None: one line): the key, counts,
    sizes and the time messages will be dated by stay whole; so does the count of messages
    whose transcript time moves."""
    from symfonic_cli.render.fit import Whole, enclose, fit, glue

    key = Whole(esc(r["key"]) + ":")
    if r["status"] == NOT_FOUND:
        pieces = [key, "not found"]
    elif r["status"] == SKIPPED:
        pieces = [key, "skipped:", esc(r["reason"])]
    elif r["status"] == NOTHING:
        pieces = [key, "nothing to prune", Whole(f"({r['checkpoints_before']} checkpoint(s))")]
    else:
        tables: list[str] = [Whole(f"{esc(t)} {n}") for t, n in r["rows"].items()]
        tables = [glue(p, p + ",") for p in tables[:-1]] + tables[-1:] + [Whole(_size(r["bytes"]))]
        if len(tables) > 1:
            tables[-2] = glue(tables[-2], tables[-2] + ";")
        pieces = [key, Whole(f"{r['rows'].get('checkpoints', 0)} of {r['checkpoints_before']} checkpoint(s)"), "to go",
                  *enclose(tables, "(", ")")]
        if r.get("delta_ancestors_kept"):
            pieces[-1] = glue(pieces[-1], pieces[-1] + ";")
            pieces += [Whole(str(r["delta_ancestors_kept"])), "kept for a DeltaChannel"]
        br = r.get("branches")
        if br:
            pieces[-1] = glue(pieces[-1], pieces[-1] + ";")
            pieces += ["forked:", Whole(f"{br['heads_deleted']} of {br['heads']} branch head(s)"), "go"]
        if r.get("messages_only_in_deleted"):
            pieces[-1] = glue(pieces[-1], pieces[-1] + ";")
            pieces += [Whole(f"{r['messages_only_in_deleted']} message(s)"), "held only in deleted checkpoints"]
        ts = r.get("timestamps_change")
        if ts:
            pieces[-1] = glue(pieces[-1], pieces[-1] + ";")
            pieces += [Whole(f"{ts['messages']} message(s)"), "will be dated", Whole(esc(str(ts["to"])))]
    return fit(pieces, width, indent="  ", hang="    ")


def _size(n: int) -> str:
    from symfonic_cli.render import human_size

    return str(human_size(n))


def totals_line(to_prune: int, checkpoints: int, size: int, redated: int, width: int | None) -> str:
    """The plan's totals, with the count of messages whose transcript time moves and why."""
    from symfonic_cli.render.fit import Whole, fit

    return fit(["to prune:", Whole(f"{to_prune:,} thread(s),"), Whole(f"{checkpoints:,} checkpoint(s),"), Whole(_size(size) + ";"),
                Whole(f"{redated:,} message(s)"), f"will be dated by a newer kept checkpoint ({TIMESTAMPS})"],
               width, indent="  ", hang="    ")


def detail(o: PruneOutcome, esc: Callable[[str], str]) -> str:
    if o.reason:
        return f": {esc(o.reason)}"
    if o.status == PRUNED:
        pieces = f"; in {o.pieces} transactions (--piece-size)" if o.pieces > 1 else ""
        return " (" + ", ".join(f"{n} {esc(t)}" for t, n in o.rows_deleted.items()) + pieces + ")"
    return ""


def thread_line(o: PruneOutcome, esc: Callable[[str], str], width: int | None = None) -> str:
    """``<status> <key><detail>``, wrapped to ``width``: the key whole, a reason between words."""
    from symfonic_cli.render.fit import Whole, fit

    more = detail(o, esc)
    if width is None:
        return f"{o.status} {esc(o.key)}{more}"
    if more.startswith(": "):
        return fit([o.status, Whole(esc(o.key) + ":"), more[2:]], width)
    return fit([o.status, Whole(esc(o.key)), more], width)


LOST = ("held only in the checkpoints deleted (compaction had removed them from the conversation): "
        "after the prune no copy is left")


def lost_line(lost: int, width: int | None) -> str:
    """The plan's count of messages the prune removes for good."""
    from symfonic_cli.render.fit import Whole, fit

    return fit(["gone for good:", Whole(f"{lost:,} message(s)"), LOST], width, indent="  ", hang="    ")


def summary_line(s: dict[str, Any]) -> str:
    line = f"pruned {s['pruned']} thread(s), {s['nothing_to_prune']} with nothing to prune, {s['failed']} failed"
    for name, label in (("skipped", "skipped"), ("not_found", "not found"), ("not_attempted", "not attempted"),
                        ("busy", "busy (a lock not had within --lock-timeout; nothing changed, rerun to take them)")):
        if s[name]:
            line += f", {s[name]} {label}"
    rows = s.get("rows_deleted") or {}
    if rows:
        line += "; deleted " + ", ".join(f"{n} {t}" for t, n in rows.items())
    return line
