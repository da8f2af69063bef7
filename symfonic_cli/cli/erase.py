"""``symfonic thread erase``: GDPR erasure of conversations, planned, confirmed, verified, receipted.
Adds its command to the ``thread`` group (``cli/thread.py``); its options are erase's declared
parameters (erase/params.py, through api/params.py), the run is the API's (api/front.py)."""

from __future__ import annotations

from typing import Any

from symfonic_cli.api.params import ERASE
from symfonic_cli.cli.declared import command, spliced
from symfonic_cli.cli.options import FormatOpt, KeyArg, StoreOpt, command_front, with_key
from symfonic_cli.cli.thread import app


@command(app, "erase", [("key", KeyArg, None), ("store", StoreOpt, None),
                        *spliced(ERASE, "missing_ok", ("fmt", FormatOpt, None))])
def erase(key: str | None, store: str | None, fmt: str | None, **given: Any) -> None:
    """Erase threads (every checkpoint, namespace and write, plus declared extra tables), one transaction per thread.

    The plan comes first; on a terminal you confirm by typing the thread key (or the number of
    threads of a batch); without a terminal --yes is required (else exit 6, nothing deleted).
    A requested key that names no thread is not-found (exit 3, with suggestions).
    """
    from symfonic_cli.api import front as api

    given["thread"] = with_key(key, given["thread"])
    front = command_front(fmt)
    api.erase(front, store, given)  # the plan, the typed confirmation on this terminal, each thread, how it ended: told to the front's Report
