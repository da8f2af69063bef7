"""thread rewind's plan and its thread line, as a person reads them (cli/report.py calls these).
Everything read from the store (keys, message text, node names) is escaped; lines are fitted to
the terminal (render/fit.py), ids and the undo command kept whole."""

from __future__ import annotations

from symfonic_cli.environment import Environment
from symfonic_cli.api.runs import Point, RewindView

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

    from symfonic_cli.api.runs import RewindOutcome

SNIPPET = 60  # characters of a message shown in the plan


def _point(p: Point, view: RewindView) -> list[str]:
    from symfonic_cli.clock import age
    from symfonic_cli.render import escape_inline as esc
    from symfonic_cli.render.fit import Whole

    by = ["by", Whole(", ".join(esc(n) for n in p.writers) + ",")] if p.writers else [Whole(f"{esc(p.source)},")] if p.source else []
    return [Whole(p.checkpoint_id), Whole(f"(step {p.step if p.step is not None else '?'},"), *by,
            Whole(f"{age(p.written, view.now)} ago)")]


def write_plan(out: TextIO, view: RewindView, env: Environment) -> None:
    """The plan a confirmation shows (and a dry run, and ``--yes`` on a reader's formats)."""
    from symfonic_cli.clock import age, human_duration
    from symfonic_cli.render import escape_inline as esc
    from symfonic_cli.render.fit import Whole, fit, width_of
    from symfonic_cli.render.terminal import paint

    width = width_of(out)

    def line(label: str, pieces: list[str]) -> None:
        # Fitted as plain text, then the label styled: escapes take no room on the screen.
        text = fit([Whole(f"{label:<8}"), *pieces], width, indent="  ", hang="          ")
        out.write("  " + paint(label, "bold", env, out) + text[2 + len(label):] + "\n")

    out.write(fit(["rewind plan for", Whole(esc(view.store_name) + ":"), "thread", Whole(esc(view.key))], width) + "\n")
    waits = f", next {', '.join(esc(n) for n in view.head_waits)}" if view.head_waits else ""
    line("now:", [f"{esc(view.head_status or '-')}{waits};", "newest checkpoint", *_point(view.head, view)])
    line("back to:", _point(view.target, view))
    line("after:", [Whole(f"{view.target.messages} message(s);"), Whole(f"{view.set_aside} set aside"),
                    "(they stay in the store: --retained, the access bundle)"])
    for m in view.last_messages:
        text = esc(str(m["content"]))
        text = text if len(text) <= SNIPPET else text[:SNIPPET - 1] + "…"
        out.write(fit([Whole(f"[{m['index']}]"), Whole(esc(str(m["role"])) + ":"), text], width, indent="      ", hang="    ") + "\n")
    if view.next_tasks:
        line("next:", ["the application runs", Whole(", ".join(esc(n) for n in view.next_tasks)), "on its next run"])
    else:
        line("next:", ["nothing is due: the next user message starts a turn from here"])
    line("branch:", [Whole(f"{view.branch} checkpoint(s)"), "up to", Whole(view.head.checkpoint_id),
                     "stay in the history (thread history shows the branch)"])
    undo = esc(view.undo)
    if width is not None and 12 + len(undo) > width:  # on a line of its own rather than split or pushed
        out.write(f"  {paint('undo:', 'bold', env, out)}\n" + paint(fit([Whole(undo)], width, indent="    "), "cyan", env, out) + "\n")
    else:
        out.write("  " + paint("undo:", "bold", env, out) + " " * 4 + paint(undo, "cyan", env, out) + "\n")
    if view.recent:
        text = fit(["refused:", "written", Whole(f"{age(view.last_write, view.now)} ago,"), "within --idle-for",
                    Whole(human_duration(view.idle_for))], width, indent="  ")
        out.write("  " + paint("refused:", "red", env, out) + text[len("  refused:"):] + "\n")
    out.flush()


def thread_line(o: RewindOutcome, width: int | None) -> str:
    """``rewound <key>: <new id> is a copy of <target> (undo: ...)``, or why nothing was written."""
    from symfonic_cli.render import escape_inline as esc
    from symfonic_cli.render.fit import Whole, fit

    if o.new_id is not None and o.reason is None:
        pieces = [o.status, Whole(esc(o.key) + ":"), Whole(o.new_id), "is a copy of", Whole(o.target)]
    else:
        pieces = [o.status, Whole(esc(o.key) + ":"), esc(o.reason or "")]
    return fit(pieces, width) + "\n"


def summary_line(document: dict) -> str:
    """The last line for a reader: what was done and how to undo it."""
    from symfonic_cli.render import escape_inline as esc

    t = document["threads"][0]
    if t["status"] == "rewound":
        return f"rewound {esc(t['key'])} to {t['copy_of']}; undo: {esc(t['undo'])}"
    return f"{t['status']} {esc(t['key'])}: nothing rewound"
