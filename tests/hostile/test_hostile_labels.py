"""Every label escaped (issues #21 item 7, #27 item 4): a store whose every text field is hostile.

A real graph writes, through the real saver of each kind, threads whose key, node names, task
paths, subgraph namespace, channel name, interrupt value, error text, messages, metadata values and
envelope versions hold a window-title OSC, a clear-screen CSI, C1 controls, a bidi override, DEL
and a line separator (tests/support/hostile_labels.py). Every inspecting command runs in every
format on a pipe (in-process) and on a pseudo-terminal (the real binary); not one raw control
character may come out (JSON escapes are fine; on the terminal our own SGR styles are).
"""

from __future__ import annotations

import json
import os
import sys

from tests.support import hostile_labels as h
from tests.support.cli import run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_stores: dict[str, str] = {}


def _store(backend) -> str:
    if backend.kind not in _stores:
        url = backend.new_store(scenarios=False)
        with backend.saver(url) as saver:
            h.write(saver)
        _stores[backend.kind] = url
    return _stores[backend.kind]


def _config(tmp_path, url: str) -> dict[str, str]:
    """A config file naming the store under a hostile name, with a hostile URL beside it."""
    path = tmp_path / "config.toml"
    esc = json.dumps  # a TOML basic string is a JSON string here
    path.write_text(f"[stores.{esc('p' + h.HOSTILE)}]\nurl = {esc(url)}\n[stores.other]\nurl = {esc('./x' + h.HOSTILE + '.db')}\n")
    return {"SYMFONIC_CONFIG": str(path), "PAGER": "cat"}


def _latest_id(backend, url: str) -> str:
    with backend.saver(url) as saver:
        return saver.get_tuple({"configurable": {"thread_id": h.KEY}}).config["configurable"]["checkpoint_id"]


def _where(args) -> str:
    return " ".join(a.encode("unicode_escape").decode() for a in args)


def test_every_label_escaped_on_a_pipe(any_kind, tmp_path):
    url = _store(any_kind)
    env = _config(tmp_path, url)
    shown = 0
    for args in h.inspecting_commands(url, _latest_id(any_kind, url)):
        r = run(*args, env=env)
        assert r.code in (0, 3, 5), f"{_where(args)}: exit {r.code} {r.err!r}"
        assert h.raw_bytes(r.out + r.err, terminal=False) == [], f"{_where(args)}: {r.out + r.err!r}"
        if "\\x1b]0;pwned" in r.out or "\\u001b]0;pwned" in r.out:
            shown += 1
        if "json" in args or "jsonl" in args:
            for line in (r.out.splitlines() if "jsonl" in args else [r.out] if r.out else []):
                json.loads(line)
    assert shown >= 50, "the hostile fields were not printed at all"


def _thread_show_text(url: str) -> str:
    return run("thread", "show", "-t", h.KEY, "--store", url, "--format", "text").out


def test_thread_show_names_the_subgraph_namespace_escaped(any_kind):
    """The case both issues found: the namespaces line of ``thread show``."""
    out = _thread_show_text(_store(any_kind))
    line = next(ln for ln in out.splitlines() if ln.startswith("  s"))
    assert line.startswith("  s\\x1b]0;pwned\\x07\\x1b[2J\\x9b1m\\x85\\u202e\\x7f\\u2028:"), line


def _on_pty(commands: list[list[str]], env: dict[str, str], timeout: float = 300) -> str:
    """The screen of one real process running every command on a pseudo-terminal."""
    from tests.support.terminal import screen_of

    code, screen = screen_of([sys.executable, "-m", "tests.support.hostile_labels", json.dumps(commands)], cols=120, rows=40,
                             env={"PYTHONPATH": ROOT, **env}, timeout=timeout, cwd=ROOT)
    assert code == 0, screen
    return screen


def test_every_label_escaped_on_a_terminal(any_kind, tmp_path):
    url = _store(any_kind)
    commands = h.inspecting_commands(url, _latest_id(any_kind, url))
    screen = _on_pty(commands, _config(tmp_path, url))
    parts = screen.split("@@END ")
    assert len(parts) == len(commands) + 1, screen[-2000:]
    styled = 0
    for i, args in enumerate(commands):
        text = parts[i].split("@@\n", 1)[-1] if i else parts[0]
        assert h.raw_bytes(text, terminal=True) == [], f"{_where(args)}: {text!r}"
        code = int(parts[i + 1].split("@@", 1)[0].split()[1])
        assert code in (0, 3, 5), f"{_where(args)}: exit {code}: {text!r}"
        styled += "\x1b[" in text
    assert styled, "no command styled its output: not a terminal?"


def test_changing_commands_escape_too(any_kind, tmp_path):
    """The erase plans (a key, a tenant prefix, a sweep), an export's lines and migrate's table."""
    url = _store(any_kind)
    for fmt in ("table", "text", "json", "jsonl"):
        for args in (
            ["thread", "erase", "--store", url, "--format", fmt, "-t", h.KEY, "--dry-run"],
            ["thread", "erase", "--store", url, "--format", fmt, "--tenant", f"t{h.HOSTILE}", "--all-sessions", "--dry-run"],
            ["thread", "erase", "--store", url, "--format", fmt, "--inactive-for", "0s", "--dry-run"],
            ["thread", "export", "--store", url, "-t", h.KEY, "-o", str(tmp_path / f"x-{fmt}.zip")],
            ["migrate", "--from", url, "--to", str(tmp_path / f"m-{fmt}.db"), "--all", "--init-target", "--format", fmt],
        ):
            r = run(*args)
            assert r.code == 0, f"{_where(args)}: exit {r.code} {r.err!r}"
            assert h.raw_bytes(r.out + r.err, terminal=False) == [], f"{_where(args)}: {r.out + r.err!r}"
