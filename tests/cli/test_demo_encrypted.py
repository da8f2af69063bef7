"""``symfonic demo PATH --encrypted KEY_FILE``: the demo conversations written through LangGraph's own
``EncryptedSerializer`` with a new random key, and that key in a file of its own (mode 0600 whatever
the umask, never printed, never an existing file), so docs/guide/encrypted-stores.md can be followed
from an empty folder. On a terminal at 80 and 120 columns, colour on and off."""

from __future__ import annotations

import json
import os
import sqlite3
import stat

import pytest

from tests.support.cli import run
from tests.support.terminal import on_terminal


@pytest.mark.parametrize("cols", [80, 120])
def test_an_encrypted_demo_and_its_key_on_a_terminal(tmp_path, cols):
    store, key_file = tmp_path / "encrypted.db", tmp_path / "aes.key"
    env = {} if cols == 80 else {"NO_COLOR": "1"}
    old = os.umask(0o022)  # a usual umask: the key file is 0600 anyway
    try:
        code, screen = on_terminal("demo", str(store), "--encrypted", str(key_file), cols=cols, env=env, timeout=300)
    finally:
        os.umask(old)
    assert code == 0, screen
    key = key_file.read_bytes()
    assert len(key) == 32 and stat.S_IMODE(key_file.stat().st_mode) == 0o600
    flat = " ".join(screen.split())
    assert "created" in flat and "aes.key" in flat and "--aes-key-file" in flat, screen
    assert key.decode() not in flat.replace(" ", "") and key[:8].decode() not in screen  # never printed

    # Every checkpoint is encrypted as LangGraph's EncryptedSerializer writes it, and LangGraph's
    # own saver with that key reads back the conversation a plain demo holds.
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(store)
    try:
        types = {t for (t,) in conn.execute("SELECT type FROM checkpoints")}
        assert types == {"msgpack+aes"}, types
        config = {"configurable": {"thread_id": "acme:eu:s-003"}}
        state = SqliteSaver(conn, serde=EncryptedSerializer.from_pycryptodome_aes(key=key)).get_tuple(config)
        assert state is not None
        said = [m.content for m in state.checkpoint["channel_values"]["messages"]]
        assert said == ["I want a refund of 42 EUR for order 1042.", "I can refund 42 EUR; an operator has to approve it."]
    finally:
        conn.close()

    # Without the key: exit 4 naming the way to give it; with it, what the plain demo shows.
    assert run("transcript", "show", "-s", str(store), "acme:eu:s-003").code == 4
    read = run("--aes-key-file", str(key_file), "transcript", "show", "-s", str(store), "acme:eu:s-003", "-f", "json")
    assert read.code == 0 and [r["content"] for r in json.loads(read.out)] == said
    by_env = run("transcript", "show", "-s", str(store), "acme:eu:s-003", "-f", "json", env={"LANGGRAPH_AES_KEY": key.decode()})
    assert by_env.code == 0 and by_env.out == read.out


def test_two_encrypted_demos_have_different_keys(tmp_path):
    for name in ("a", "b"):
        assert run("demo", str(tmp_path / f"{name}.db"), "--encrypted", str(tmp_path / f"{name}.key")).code == 0
    assert (tmp_path / "a.key").read_bytes() != (tmp_path / "b.key").read_bytes()


def test_an_existing_key_file_is_never_overwritten(tmp_path):
    key_file = tmp_path / "aes.key"
    key_file.write_bytes(b"someone else's key")
    r = run("demo", str(tmp_path / "encrypted.db"), "--encrypted", str(key_file))
    assert r.code == 2 and r.out == "" and r.err.count("\n") == 1 and "already exists" in r.err
    assert key_file.read_bytes() == b"someone else's key" and not (tmp_path / "encrypted.db").exists()
    same = run("demo", str(tmp_path / "x.db"), "--encrypted", str(tmp_path / "x.db"))
    assert same.code == 2 and "its own file" in same.err and not (tmp_path / "x.db").exists()


def test_run_again_it_keeps_the_store_and_the_key(tmp_path):
    store, key_file = tmp_path / "encrypted.db", tmp_path / "aes.key"
    assert run("demo", str(store), "--encrypted", str(key_file)).code == 0
    before = (store.read_bytes(), key_file.read_bytes())
    again = run("demo", str(store), "--encrypted", str(key_file))
    assert again.code == 0 and "kept as it is" in again.out
    assert (store.read_bytes(), key_file.read_bytes()) == before
    # A plain demo store is not made encrypted by naming a new key file: refused, no key written.
    plain = tmp_path / "demo.db"
    assert run("demo", str(plain)).code == 0
    refused = run("demo", str(plain), "--encrypted", str(tmp_path / "new.key"))
    assert refused.code == 2 and not (tmp_path / "new.key").exists()
