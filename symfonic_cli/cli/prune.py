"""``symfonic thread prune``: old checkpoints removed, planned, confirmed, verified, receipted.
Adds its command to the ``thread`` group (``cli/thread.py``); its options are prune's declared
parameters (prune/params.py, through api/params.py), the run is the API's (api/front.py)."""

from __future__ import annotations

from typing import Any

from symfonic_cli.api.params import PRUNE
from symfonic_cli.cli.declared import command, spliced
from symfonic_cli.cli.options import FormatOpt, KeyArg, StoreOpt, command_front, with_key
from symfonic_cli.cli.thread import app


@command(app, "prune", [("key", KeyArg, None), ("store", StoreOpt, None),
                        *spliced(PRUNE, "missing_ok", ("fmt", FormatOpt, None))])
def prune(key: str | None, store: str | None, fmt: str | None, **given: Any) -> None:
    """Delete old checkpoints (with their writes, and the blobs no kept checkpoint uses), keeping the
    latest N of every namespace: exactly what LangGraph's PostgresSaver.prune keeps with --keep 1.

    The plan comes first; on a terminal you confirm by typing the number of threads; without a
    terminal --yes is required (else exit 6, nothing deleted). One transaction per thread, verified;
    a thread with more than --piece-size checkpoints to delete in several, oldest first.
    """
    from symfonic_cli.api import front as api

    given["thread"] = with_key(key, given["thread"])
    front = command_front(fmt)
    api.prune(front, store, given)  # the plan, the typed confirmation on this terminal, each thread, how it ended: told to the front's Report
