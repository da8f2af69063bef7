"""Small frictions of issue #25 item 8: a migrate to a missing file names --init-target, an export
to a file name is refused before anything is made, help lists a command's own options first and
the global ones once under their own heading, arguments are listed once, and key/value tables
(thread show, store info, compat report) have the frame of every other table."""

from __future__ import annotations


import pytest

from tests.support.cli import run_process
from tests.support.terminal import on_terminal

COMMANDS = [
    ("transcript", "show"), ("threads", "list"), ("thread", "show"), ("thread", "history"), ("thread", "diff"),
    ("thread", "export"), ("thread", "erase"), ("store", "info"), ("compat", "report"), ("migrate",), ("demo",),
    ("completion", "install"),
]


def test_migrate_to_a_missing_file_suggests_init_target(sqlite_master, tmp_path):
    target = tmp_path / "new.db"
    res = run_process("migrate", "--from", str(sqlite_master), "--to", str(target), "--all")
    assert res.code == 4, res.err
    assert "check --to" in res.err and "--init-target" in res.err
    assert not target.exists()


@pytest.mark.parametrize("name", ["out.json", "out.jsonl", "bundle.txt", "x.tgz"])
def test_export_to_a_file_name_is_refused_and_makes_nothing(sqlite_master, tmp_path, name):
    out = tmp_path / name
    res = run_process("thread", "export", "-s", str(sqlite_master), "-t", "acme:_:s-001", "-o", str(out))
    assert res.code == 2 and "names a file" in res.err and res.err.count("\n") == 1, res.err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_export_to_a_dotted_directory_with_a_slash_works(sqlite_master, tmp_path):
    out = tmp_path / "bundle.json"
    res = run_process("thread", "export", "-s", str(sqlite_master), "-t", "acme:_:s-001", "-o", f"{out}/")
    assert res.code == 0, res.err
    assert (out / "manifest.json").is_file()


@pytest.mark.parametrize("words", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_help_lists_own_options_then_global_ones_once(words):
    res = run_process(*words, "--help", env={"COLUMNS": "100"})
    assert res.code == 0, res.err
    text = res.out
    assert "Positional arguments" not in text
    assert text.count("\nArguments:") <= 1
    assert text.count("\nOptions:") == 1 and text.count("\nGlobal options:") == 1, text
    own, glob = text.split("\nGlobal options:", 1)
    assert "--debug" in glob and "--debug" not in own
    assert "--help" in own.split("\nOptions:", 1)[1]
    store_opts = ("--connect-timeout", "--pg-schema", "--checkpoint-collection", "--writes-collection")
    if words[0] in ("demo", "completion"):
        assert not any(o in text for o in store_opts), text
    else:
        assert all(o in glob for o in store_opts)
        assert ("--from" if words == ("migrate",) else "--store") in own


@pytest.mark.parametrize("cols", [80, 120])
def test_key_value_tables_have_no_outer_frame(sqlite_master, cols):
    for args in (("store", "info"), ("thread", "show", "-t", "acme:_:s-001"), ("compat", "report")):
        code, screen = on_terminal(*args, "-s", str(sqlite_master), "-f", "table", "--no-pager", cols=cols)
        assert code == 0, screen
        assert not set("┌┐└┘─━┏┓┗┛") & set(screen), screen
        assert "│" in screen  # the rule between the columns, as in every other table
