"""The typed confirmation is a step the caller supplies (issue #35 item 2): the command line asks
on its terminal, the library on its own asks no one (``yes`` is the way), and any other caller (a
dialog) answers through its own Terminal; the plan is shown where the answer is read."""

from __future__ import annotations

import io
import json

import pytest

from symfonic_cli.environment import Environment
from symfonic_cli.erase.confirm import Terminal
from symfonic_cli.errors import NotConfirmedError
from symfonic_cli.location import resolve_store
from symfonic_cli.selection import key_list
from tests.support.cli import run


def _keys(store) -> list[str]:
    return [t["key"] for t in json.loads(run("threads", "list", "-s", str(store), "-f", "json").out)][:2]


def _env(typed: str) -> Environment:
    # A person at a terminal typing the count: what the library must not read unless told to.
    return Environment(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO(typed), stdin_isatty=True)


@pytest.mark.parametrize("operation", ["erase", "prune"])
def test_the_library_asks_no_one_unless_the_caller_supplies_the_step(sqlite_store, operation):
    from symfonic_cli.erase.run import EraseRequest
    from symfonic_cli.erase.run import run as erase_run
    from symfonic_cli.storage.prune import PruneRequest
    from symfonic_cli.storage.prune import run as prune_run

    keys = _keys(sqlite_store)
    loc = resolve_store(str(sqlite_store))
    make, go = (EraseRequest, erase_run) if operation == "erase" else (PruneRequest, prune_run)
    before = run("threads", "list", "-s", str(sqlite_store), "-f", "json").out
    with pytest.raises(NotConfirmedError):
        go(make(location=loc, options={}, selection=key_list(keys), fmt="json"), _env("2\n"))
    assert run("threads", "list", "-s", str(sqlite_store), "-f", "json").out == before  # nothing changed

    shown, asked = io.StringIO(), []

    def dialog(env: Environment, *, from_stdin: bool = False) -> Terminal:
        asked.append(from_stdin)
        return Terminal(io.StringIO("2\n"), shown)

    env = _env("")
    go(make(location=loc, options={}, selection=key_list(keys), fmt="json", ask=dialog), env)
    assert asked == [False] and "Type the number of threads (2)" in shown.getvalue()
    assert all(k in shown.getvalue() for k in keys)  # the plan was shown where the answer was read
    after = {t["key"]: t for t in json.loads(run("threads", "list", "-s", str(sqlite_store), "-f", "json").out)}
    if operation == "erase":
        assert not set(keys) & set(after)
    else:
        assert all(after[k]["checkpoints"] >= 1 for k in keys)
