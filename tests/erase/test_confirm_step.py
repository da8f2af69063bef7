"""The typed confirmation is a step the caller supplies (issue #35 item 2): the command line asks
on its terminal (cli/report.py), the library on its own asks no one (``yes`` is the way), and any
other caller (a dialog) is its own Report's ``confirm``: it is handed the plan as data and asks."""

from __future__ import annotations

import io
import json

import pytest

from symfonic_cli.environment import Environment
from symfonic_cli.changes.report import Confirmation, Report, RequestView
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
    from symfonic_cli.prune.run import PruneRequest
    from symfonic_cli.prune.run import run as prune_run

    keys = _keys(sqlite_store)
    loc = resolve_store(str(sqlite_store))
    make, go = (EraseRequest, erase_run) if operation == "erase" else (PruneRequest, prune_run)
    before = run("threads", "list", "-s", str(sqlite_store), "-f", "json").out
    with pytest.raises(NotConfirmedError):
        go(make(location=loc, options={}, selection=key_list(keys)), _env("2\n"))
    assert run("threads", "list", "-s", str(sqlite_store), "-f", "json").out == before  # nothing changed

    asked: list[Confirmation] = []

    class Dialog(Report):
        def confirm(self, step: Confirmation) -> None:
            asked.append(step)  # a dialog would show step.view and read the count; this one says yes

    env = _env("")
    go(make(location=loc, options={}, selection=key_list(keys)), env, Dialog())
    (step,) = asked
    assert step.operation == operation and step.threads == 2 and step.key is None and not step.from_stdin
    # The plan comes as data: the threads it holds, never text.
    held = [p.key for p in step.view.plans] if isinstance(step.view, RequestView) else [r["key"] for r in step.view.sample]
    assert held == keys
    assert env.stdout.getvalue() == env.stderr.getvalue() == ""  # nothing printed, the terminal never read
    after = {t["key"]: t for t in json.loads(run("threads", "list", "-s", str(sqlite_store), "-f", "json").out)}
    if operation == "erase":
        assert not set(keys) & set(after)
    else:
        assert all(after[k]["checkpoints"] >= 1 for k in keys)
