"""``symfonic thread rewind``: continue a conversation from an earlier checkpoint (LangGraph's copy),
planned, confirmed, receipted. Adds its command to the ``thread`` group (``cli/thread.py``); its
options are rewind's declared parameters (rewind/params.py, through api/params.py), the run is the
API's (api/front.py) with the command line's Report, which renders its events (cli/report.py,
cli/rewind_text.py) and asks the typed confirmation on this terminal."""

from __future__ import annotations

from typing import Any

from symfonic_cli.api.params import REWIND
from symfonic_cli.cli.declared import command, spliced
from symfonic_cli.cli.options import FormatOpt, KeyArg, StoreOpt, command_front, with_key
from symfonic_cli.cli.thread import app


@command(app, "rewind", [("key", KeyArg, None), ("store", StoreOpt, None),
                         *spliced(REWIND, "ticket", ("fmt", FormatOpt, None))])
def rewind(key: str | None, store: str | None, fmt: str | None, **given: Any) -> None:
    """Continue a conversation from an earlier checkpoint, as LangGraph's time travel does.

    Writes a copy of the checkpoint as the thread's newest (LangGraph's update_state with
    as_node="__copy__", through the store's own saver): the application's next run starts from
    there. Nothing is deleted: the branch left behind stays in the history, and a rewind to the
    old head (the plan prints the command) undoes it. On a terminal you confirm by typing the
    thread key; without one --yes is required (else exit 6, nothing written).
    """
    from symfonic_cli.api import front as api

    given["thread"] = with_key(key, given["thread"])
    front = command_front(fmt)
    api.rewind(front, store, given)  # the plan, the typed confirmation on this terminal, the copy written, how it ended: told to the front's Report
