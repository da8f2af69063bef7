"""A changing command finds its store once (api/front.py ``_selection``), after the selection's
own errors: a command with neither a selection nor a store says which thread first, as it always did."""

from __future__ import annotations

import pytest

from symfonic_cli.errors import EXIT_USAGE
from tests.support.cli import run


@pytest.mark.parametrize("command", [["thread", "prune"], ["thread", "erase"], ["thread", "export", "--output", "out.zip"]])
def test_the_selection_is_checked_before_the_store_is_looked_for(command, tmp_path):
    r = run(*command, env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert r.code == EXIT_USAGE
    assert r.err == "symfonic: error: which thread? (pass --thread KEY or --tenant T --session ID)\n"


def test_a_missing_store_is_still_refused_once_a_thread_is_named(tmp_path):
    r = run("thread", "prune", "--thread", "t:_:1", env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert r.code == EXIT_USAGE
    assert r.err == "symfonic: error: no store given (pass --store URL or set SYMFONIC_STORE)\n"
