"""thread rewind's plan and typed confirmation where a person sees them (issue 48): the real binary on
a pseudo-terminal at 80 and 120 columns, colour on and NO_COLOR. Every line fits the terminal (ids
and the undo command whole); the right key rewinds, a wrong one writes nothing (exit 6); a hostile
message in the conversation is shown escaped."""

from __future__ import annotations

import re
import sys

import pytest

from tests.conftest import backend_for
from tests.support import run_state_scenarios as rs
from tests.support.rewind_scenarios import cfg, write
from tests.support.terminal import Session

KEY = "acme:_:react-sy"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _store(request) -> tuple[object, str]:
    backend = backend_for("sqlite", request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        write(saver, "plain")
    return backend, url


def _ids(backend, url: str) -> list[str]:
    with backend.saver(url) as saver:  # type: ignore[attr-defined]
        return [s.config["configurable"]["checkpoint_id"] for s in rs.react_graph().compile(checkpointer=saver).get_state_history(cfg(KEY))]


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("colour", [True, False])
def test_plan_and_confirmation_on_a_terminal(request, cols, colour):
    backend, url = _store(request)
    before = _ids(backend, url)
    env = {} if colour else {"NO_COLOR": "1"}
    argv = [sys.executable, "-m", "symfonic_cli", "thread", "rewind", "-s", url, KEY, "--to", "-5", "--idle-for", "0"]
    with Session(argv, cols=cols, env=env) as s:
        s.read_until("Type the thread key to rewind it: ")
        s.send(b"acme:_:react\r")  # not the key: refused
        code = s.wait()
        shown = s.drain()
    assert code == 6, shown
    assert "not confirmed: expected 'acme:_:react-sy', nothing written" in shown
    assert _ids(backend, url) == before
    assert bool(ANSI.search(shown)) is colour  # styles only where colour is on
    plain = ANSI.sub("", shown)
    lines = plain.splitlines()
    assert all(len(line) <= cols for line in lines), [line for line in lines if len(line) > cols]
    assert plain.startswith("rewind plan for") and any(line.strip().startswith("back to:") for line in lines)
    assert f"symfonic thread rewind {KEY} --to {before[0]}" in plain  # the undo command, whole
    assert before[4] in plain and before[0] in plain
    assert "\x1b[31m" not in plain and "follow-up \\x1b[31m" in plain  # the tool's hostile text, escaped

    with Session(argv, cols=cols, env=env) as s:
        s.read_until("Type the thread key to rewind it: ")
        s.send(KEY.encode() + b"\r")
        code = s.wait()
        done = ANSI.sub("", s.drain())
    assert code == 0, done
    assert f"rewound {KEY} to {before[4]}" in done.replace("\n", " ") or f"rewound {KEY}" in done
    after = _ids(backend, url)
    assert after[1:] == before and len(after) == len(before) + 1
