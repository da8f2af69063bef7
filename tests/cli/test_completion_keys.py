"""TAB completes thread keys after -t/--thread from the store on the command line (or
SYMFONIC_STORE), read by prefix in the database; root-only options are not offered after a
command; --tz completes zone names (issue #25 item 7). A real interactive bash in tmux, keys with
':' in them (one of bash's word breaks), and the store method on every kind."""

from __future__ import annotations

import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from symfonic_cli import complete
from symfonic_cli.completions import script

BIN = str(Path(sys.executable).parent)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "SYMFONIC_", "_SYMFONIC"))}
    env.update(HOME=str(home), PATH=f"{BIN}:{os.environ.get('PATH', '')}", **extra)
    return env


def _tab(env: dict[str, str], line: str, cwd: Path) -> list[str]:
    """What symfonic answers bash for ``line`` (cursor at its end), as bash passes it."""
    proc = subprocess.run(
        [sys.executable, "-m", "symfonic_cli"], capture_output=True, text=True, cwd=cwd, timeout=60,
        env={**env, "_SYMFONIC_COMPLETE": "complete_bash", "COMP_LINE": line, "COMP_POINT": str(len(line)),
             "COMP_WORDBREAKS": " \t\n\"'><=;|&(:"},
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return proc.stdout.split("\n") if proc.stdout else []


def test_keys_come_from_the_store_named_on_the_line(sqlite_store, tmp_path):
    env = _env(tmp_path)
    store = str(sqlite_store)
    conn = sqlite3.connect(store)
    keys = sorted({r[0] for r in conn.execute("SELECT thread_id FROM checkpoints UNION SELECT thread_id FROM writes")})
    conn.close()
    assert len(keys) > 2
    first = keys[0]
    tenant = first.split(":", 1)[0]
    # bash breaks words at ':': the answer is the part after the word's last ':'
    want = [k for k in keys if k.startswith(f"{tenant}:")]
    assert _tab(env, f"symfonic transcript show -s {store} -t {tenant}:", tmp_path) == [k[len(tenant) + 1:] for k in want]
    # no break characters given (zsh, fish, an old script): whole keys
    assert complete.candidates(complete.load_tree(), ["transcript", "show", "--store", store, "--thread"], tenant) == \
        [k for k in keys if k.startswith(tenant)]
    # SYMFONIC_STORE when the line names none; --store=VALUE too
    env_store = {**env, "SYMFONIC_STORE": store}
    assert _tab(env_store, "symfonic thread show --thread ", tmp_path) == keys[: complete.MAX_KEYS]
    assert _tab(env, f"symfonic thread history --store={store} -t {first}", tmp_path) == [first.rsplit(":", 1)[1]]
    # no store anywhere, or one that cannot be opened: nothing, silently
    assert _tab(env, "symfonic transcript show -t a", tmp_path) == []
    assert _tab(env, f"symfonic transcript show -s {tmp_path / 'missing.db'} -t a", tmp_path) == []


def test_hostile_keys_are_not_offered(tmp_path):
    # A key with a newline or an escape would inject a line of its own into the protocol.
    from langgraph.checkpoint.sqlite import SqliteSaver

    from tests.support.scenarios import write_scenarios

    db = tmp_path / "hostile.db"
    conn = sqlite3.connect(db, check_same_thread=False)
    write_scenarios(SqliteSaver(conn), only=["acme:_:s-001"])
    good = conn.execute("SELECT thread_id FROM checkpoints LIMIT 1").fetchone()[0]
    for bad in ("evil:_:x\nrm -rf", "evil:_:\x1b]0;owned\x07", "evil:_:a b"):
        conn.execute("INSERT INTO checkpoints SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
                     "FROM checkpoints WHERE thread_id = ?", (bad, good))
    conn.execute("INSERT INTO checkpoints SELECT 'evil:_:fine', checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
                 "FROM checkpoints WHERE thread_id = ?", (good,))
    conn.commit()
    conn.close()
    assert _tab(_env(tmp_path), f"symfonic transcript show -s {db} -t evil", tmp_path) == ["evil:_:fine"]


def test_at_most_100_keys(tmp_path):
    db = tmp_path / "many.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL, "
                 "parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))")
    conn.execute("CREATE TABLE writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL, "
                 "task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT, value BLOB, "
                 "PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))")
    conn.executemany("INSERT INTO checkpoints (thread_id, checkpoint_id, metadata) VALUES (?, ?, '{}')",
                     [(f"acme:_:s-{i:04d}", str(uuid.uuid4())) for i in range(250)])
    conn.commit()
    conn.close()
    got = _tab(_env(tmp_path), f"symfonic transcript show -s {db} -t acme:_:s-0", tmp_path)
    assert got == [f"s-{i:04d}" for i in range(100)]


def test_every_kind_reads_keys_by_prefix_with_a_limit(any_kind):
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    url = any_kind.new_store()
    with open_store(parse_location(url)) as store:
        every = store.thread_keys_with_prefix("")
        assert len(every) >= 3
        assert store.thread_keys_with_prefix("", limit=2) == every[:2]
        tenant = every[0].split(":", 1)[0] + ":"
        same = [k for k in every if k.startswith(tenant)]
        assert store.thread_keys_with_prefix(tenant, limit=100) == same
        assert store.thread_keys_with_prefix(tenant, limit=1) == same[:1]


def test_root_only_options_only_at_the_root():
    tree = complete.load_tree()
    after = complete.candidates(tree, ["threads", "list"], "--")
    for opt in ("--version", "--install-completion", "--show-completion"):
        assert opt not in after
    assert "--store" in after and "--debug" in after  # root options that also work after the command
    assert "--version" in complete.candidates(tree, [], "--v")


def test_tz_completes_zone_names():
    tree = complete.load_tree()
    got = complete.candidates(tree, ["threads", "list", "--tz"], "Europe/Be")
    assert "Europe/Berlin" in got and all(z.startswith("Europe/Be") for z in got)
    assert complete.candidates(tree, ["--tz"], "ut") == ["UTC"] + [z for z in complete.zone_names()[1:] if z.lower().startswith("ut")]


@pytest.mark.skipif(not shutil.which("tmux"), reason="tmux is not installed")
def test_a_real_bash_completes_a_key_at_the_terminal(sqlite_master, tmp_path):
    # An interactive bash in tmux: type the line, press TAB, read the screen.
    env = _env(tmp_path, TERM="xterm-256color")
    comp = tmp_path / "symfonic.bash"
    comp.write_text(script("bash"))
    rc = tmp_path / "rc"
    rc.write_text(f"PS1='$ '\n. {shlex.quote(str(comp))}\ncd {shlex.quote(str(tmp_path))}\n")
    _tab_in_bash(sqlite_master, tmp_path, env, rc, "symfonic transcript show -s demo.db -t")


def test_the_key_argument_completes_from_the_store(sqlite_store, tmp_path):
    """Issue #37 item 8: TAB completes the KEY argument of every command of one thread as it does
    --thread's value: from the store on the line, by prefix, read-only; only as the first argument
    and only when no other option names the thread."""
    env = _env(tmp_path)
    store = str(sqlite_store)
    conn = sqlite3.connect(store)
    keys = sorted({r[0] for r in conn.execute("SELECT thread_id FROM checkpoints UNION SELECT thread_id FROM writes")})
    conn.close()
    tenant = keys[0].split(":", 1)[0]
    want = [k[len(tenant) + 1:] for k in keys if k.startswith(f"{tenant}:")]
    for command in ("transcript show", "thread show", "thread history", "thread diff", "thread export", "thread erase",
                    "thread prune", "compat show", "compat report"):
        assert _tab(env, f"symfonic {command} -s {store} {tenant}:", tmp_path) == want, command
    assert _tab(env, f"symfonic thread show --store={store} --tools {keys[0][:3]}", tmp_path) == [k for k in keys if k.startswith(keys[0][:3])]
    assert _tab({**env, "SYMFONIC_STORE": store}, "symfonic transcript show ", tmp_path) == keys[: complete.MAX_KEYS]
    # Not a key there: a second argument, a key given by option, a command without a key argument.
    assert _tab(env, f"symfonic thread show -s {store} {keys[0]} ", tmp_path) == []
    assert _tab(env, f"symfonic thread diff -s {store} -t {keys[0]} ", tmp_path) == []
    assert _tab(env, f"symfonic thread erase -s {store} --tenant {tenant} --session ", tmp_path) == []
    assert _tab(env, f"symfonic threads list -s {store} {tenant}", tmp_path) == []
    # Subcommands still complete where a group is reached.
    assert _tab(env, "symfonic thread hi", tmp_path) == ["history"]
    # No store, or one that cannot be opened: nothing, silently; the store is not changed.
    assert _tab(env, "symfonic transcript show a", tmp_path) == []
    assert _tab(env, f"symfonic transcript show -s {tmp_path / 'missing.db'} a", tmp_path) == []
    assert not (tmp_path / "missing.db").exists()


def test_typer_completion_flags_point_to_the_one_installer(tmp_path):
    """Issue #37 item 8: one completion installer (typer's --install-completion wrote another file);
    the root's old flags say which command it is (exit 2, one line) and write nothing."""
    env = _env(tmp_path)
    for flag, verb in (("--install-completion", "install"), ("--show-completion", "show")):
        proc = subprocess.run([sys.executable, "-m", "symfonic_cli", flag], capture_output=True, text=True, env=env, timeout=60)
        assert proc.returncode == 2 and proc.stdout == "", proc.stderr
        assert proc.stderr.count("\n") == 1 and f"symfonic completion {verb}" in proc.stderr and "Traceback" not in proc.stderr
    assert not any(Path(env["HOME"]).rglob("*")), list(Path(env["HOME"]).rglob("*"))
    root_help = subprocess.run([sys.executable, "-m", "symfonic_cli", "--help"], capture_output=True, text=True, env=env).stdout
    assert "--install-completion" not in root_help and "completion" in root_help


@pytest.mark.skipif(not shutil.which("tmux"), reason="tmux is not installed")
def test_a_real_bash_completes_the_key_argument(sqlite_master, tmp_path):
    # Installed by the one installer into a fresh HOME, then an interactive bash in tmux: type, TAB, read.
    env = _env(tmp_path, TERM="xterm-256color", SHELL="/bin/bash")
    subprocess.run(["symfonic", "completion", "install", "bash"], check=True, capture_output=True, env=env)
    rc = tmp_path / "rc"
    rc.write_text(f". ~/.bashrc\nPS1='$ '\ncd {shlex.quote(str(tmp_path))}\n")
    _tab_in_bash(sqlite_master, tmp_path, env, rc, "symfonic thread history -s demo.db")


def _tab_in_bash(sqlite_master: Path, tmp_path: Path, env: dict[str, str], rc: Path, line: str) -> None:
    """An interactive bash (``rc``) in tmux, in a folder holding demo.db: type ``line``, then the
    shortest prefix (past the tenant's ':') that names one key, press TAB, and read the screen
    until that key is completed."""
    store = tmp_path / "demo.db"
    shutil.copyfile(sqlite_master, store)
    conn = sqlite3.connect(store)
    keys = sorted(r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints"))
    conn.close()
    target = keys[0]
    stem = next(target[:n] for n in range(target.index(":") + 2, len(target) + 1)
                if [k for k in keys if k.startswith(target[:n])] == [target])
    sock = f"symfonic-test-{uuid.uuid4().hex[:8]}"
    tmux = ["tmux", "-L", sock]
    subprocess.run([*tmux, "new-session", "-d", "-x", "120", "-y", "20", "bash", "--noprofile", "--rcfile", str(rc), "-i"],
                   check=True, env=env)
    try:
        time.sleep(0.5)
        subprocess.run([*tmux, "send-keys", f"{line} {stem}", "Tab"], check=True)
        screen = ""
        for _ in range(100):
            time.sleep(0.1)
            screen = subprocess.run([*tmux, "capture-pane", "-p"], capture_output=True, text=True).stdout
            if f"{line} {target}" in screen:
                break
        assert f"$ {line} {target}" in screen, screen
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
