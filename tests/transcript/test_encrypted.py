"""Stores written with LangGraph's EncryptedSerializer.from_pycryptodome_aes(): with the key every
command gives what it gives on the same conversation stored in the clear; without it, what needs
no decrypted bytes still works and the rest is one line, exit 4; the key is never printed.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from tests.conftest import backend_for
from tests.support import backends
from tests.support.cli import run, run_process

KEY = "k3y-Of-32-bytes-for-AES-256-eax!"
WRONG = "another-key-of-32-bytes-for-AES!"
KEYS = ("acme:_:s-001", "acme:eu:s-003", "initech:_:s-sub", "acme:_:s-rewrite")


def _encrypted_serde(key: str):
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

    return EncryptedSerializer.from_pycryptodome_aes(key=key.encode())


@pytest.fixture(scope="module", params=backends.KINDS)
def pair(request):
    """``(backend, plain url, encrypted url)``: the scenario conversations put through the real
    savers twice, once plainly and once with the EncryptedSerializer (same ids and times)."""
    backend = backend_for(request.param, request)
    source = backend.new_store()
    plain = backend.new_store(scenarios=False)
    enc = backend.new_store(scenarios=False)
    with backend.saver(source) as src, backend.saver(plain) as p:
        backends.copy_store(src, p)
    with backend.saver(source) as src, backend.saver(enc) as e:
        e.serde = _encrypted_serde(KEY)
        backends.copy_store(src, e)
    return backend, plain, enc


def _with_key(*args):
    return run(*args, env={"LANGGRAPH_AES_KEY": KEY})


def _clean(out: str, drop=("size_bytes",)):
    data = json.loads(out)
    for record in data if isinstance(data, list) else [data]:
        if isinstance(record, dict):
            for k in drop:
                record.pop(k, None)
    return data


def _unread_by_symfonic_core(out: str) -> bool:
    """symfonic-core's serializer has no cipher: the encrypted rows say the application reads none."""
    data = json.loads(out)
    rows = data if isinstance(data, list) else []
    recalls = data.get("restart_recalls") if isinstance(data, dict) else None
    return (all("encrypted" in r["not_read_by_application"] for r in rows)
            and (recalls is None or (recalls["turns"] == 0 and "encrypted" in recalls["reason"])))


def test_the_store_is_really_encrypted(pair):
    backend, _, enc = pair
    with backend.saver(enc) as saver:
        with pytest.raises(NotImplementedError, match=r"msgpack\+aes"):  # the plain serializer cannot read it
            list(saver.list(None))
        saver.serde = _encrypted_serde(KEY)
        assert len(list(saver.list(None))) > 10  # the application's own serializer can
    from symfonic_cli.stores import open_store
    from symfonic_cli.location import resolve_store

    with open_store(resolve_store(enc), writable=False) as store:
        state = store.read_message_state("acme:_:s-001") if store.kind != "postgres" else None
        if state is not None:
            assert state.payload_type == "msgpack+aes" and b"order 1042" not in state.payload


@pytest.mark.parametrize("key", KEYS)
def test_with_the_key_every_command_gives_what_the_plain_store_gives(pair, key):
    _, plain, enc = pair
    for args, drop in (
        (("transcript", "show", "-t", key, "--tools", "-f", "json"), ("not_read_by_application",)),
        (("thread", "show", "-t", key, "-f", "json"), ("size_bytes", "restart_recalls")),
        (("thread", "history", "-t", key, "-f", "json"), ()),
        (("thread", "diff", "-t", key, "-f", "json", "--", "-2", "-1"), ()),
    ):
        a = run(*args[:2], "-s", plain, *args[2:])
        b = _with_key(*args[:2], "-s", enc, *args[2:])
        assert a.code == 0 and b.code == 0, (args, a.err, b.err)
        assert _clean(b.out, drop) == _clean(a.out, drop), args
        if args[:2] in (("transcript", "show"), ("thread", "show")):
            assert _unread_by_symfonic_core(b.out), args


def test_without_the_key_listing_works_and_content_is_one_line_exit_4(pair):
    _, plain, enc = pair
    a = run("threads", "list", "-s", plain, "-f", "json")
    b = run("threads", "list", "-s", enc, "-f", "json")
    assert b.code == 0 and json.loads(b.out) == json.loads(a.out)
    assert run("store", "info", "-s", enc).code == 0
    for args in (("transcript", "show", "-t", "acme:_:s-001"), ("thread", "history", "-t", "acme:_:s-001"),
                 ("thread", "diff", "-t", "acme:_:s-001", "--", "-2", "-1")):
        res = run(*args[:2], "-s", enc, *args[2:])
        assert res.code == 4, (args, res.err)
        assert res.out == "" and len(res.err.strip().splitlines()) == 1
        assert "encrypted" in res.err and "LANGGRAPH_AES_KEY" in res.err and "--aes-key-file" in res.err


def test_a_wrong_key_is_authentication_failed_and_no_key_is_ever_printed(pair):
    _, _, enc = pair
    res = run("transcript", "show", "-t", "acme:_:s-001", "-s", enc, env={"LANGGRAPH_AES_KEY": WRONG})
    assert res.code == 4 and len(res.err.strip().splitlines()) == 1
    assert "the key does not decrypt" in res.err and "checkpoint 1" in res.err and "(authentication failed)" in res.err
    debug = run_process("--debug", "transcript", "show", "-t", "acme:_:s-001", "-s", enc, env={"LANGGRAPH_AES_KEY": WRONG})
    assert "Traceback" in debug.err and "authentication failed" in debug.err  # --debug shows the traceback
    ok = run_process("--debug", "transcript", "show", "-t", "acme:_:s-001", "-s", enc, "-f", "json", env={"LANGGRAPH_AES_KEY": KEY})
    assert ok.code == 0
    for r in (res, debug, ok):
        assert WRONG not in r.out + r.err and KEY not in r.out + r.err
        assert KEY.encode().hex() not in r.out + r.err


def test_erase_needs_no_key(pair):
    backend, _, enc = pair
    url = backend.new_store(scenarios=False)
    with backend.saver(enc) as src, backend.saver(url) as dst:
        src.serde = dst.serde = _encrypted_serde(KEY)
        backends.copy_store(src, dst)
    res = run("thread", "erase", "-t", "globex:_:s-101", "-s", url, "--yes")
    assert res.code == 0, res.err
    assert "globex:_:s-101" not in run("threads", "list", "-s", url).out


def test_key_file(pair, tmp_path):
    _, plain, enc = pair
    path = tmp_path / "aes.key"
    path.write_bytes(KEY.encode())
    path.chmod(0o644)
    res = run("--aes-key-file", str(path), "transcript", "show", "-t", "acme:_:s-001", "-s", enc)
    assert res.code == 2 and "group or others" in res.err and KEY not in res.err
    path.chmod(0o600)
    want = run("transcript", "show", "-t", "acme:_:s-001", "-s", plain, "-f", "json").out
    for res in (
        run("--aes-key-file", str(path), "transcript", "show", "-t", "acme:_:s-001", "-s", enc, "-f", "json"),
        run("transcript", "show", "-t", "acme:_:s-001", "-s", enc, "-f", "json", env={"SYMFONIC_AES_KEY_FILE": str(path)}),
        run("transcript", "show", "-t", "acme:_:s-001", "-s", enc, "-f", "json", "--aes-key-file", str(path)),
    ):
        assert res.code == 0, res.err
        assert _clean(res.out, ("not_read_by_application",)) == json.loads(want) and _unread_by_symfonic_core(res.out)
    path.write_bytes(b"short")
    res = run("--aes-key-file", str(path), "threads", "list", "-s", enc)
    assert res.code == 2 and "16, 24 or 32 bytes" in res.err


def test_without_pycryptodome_the_extra_is_named(sqlite_master, tmp_path):
    backend = backends.get("sqlite")
    enc = str(tmp_path / "enc.db")
    with backend.saver(str(sqlite_master)) as src, backend.saver(enc) as dst:
        dst.setup()
        dst.serde = _encrypted_serde(KEY)
        backends.copy_store(src, dst)
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['Crypto'] = None\n")
    env = {"LANGGRAPH_AES_KEY": KEY, "PYTHONPATH": os.pathsep.join([str(hide), *sys.path])}
    res = run_process("transcript", "show", "-t", "acme:_:s-001", "-s", enc, env=env)
    assert res.code == 4, res.err
    assert "symfonic[encrypted]" in res.err and "Traceback" not in res.err
    assert run_process("threads", "list", "-s", enc, env=env).code == 0


def test_plaintext_values_in_an_encrypted_store_are_a_finding(pair):
    backend, plain, enc = pair
    from langchain_core.messages import HumanMessage

    from tests.support.scenarios import agent_graph

    url = backend.new_store(scenarios=False)
    with backend.saver(enc) as src, backend.saver(url) as dst:
        src.serde = dst.serde = _encrypted_serde(KEY)
        backends.copy_store(src, dst)
    assert run("compat", "report", "-s", url, "--fail-on", "plaintext").code == 0  # all encrypted
    intruder = {"configurable": {"thread_id": "plain:_:intruder"}}
    with backend.saver(url) as saver:  # the plain serializer, as an application without the key writes
        agent_graph().compile(checkpointer=saver).invoke({"messages": [HumanMessage(content="in the clear")]}, intruder)
        ids = sorted(t.config["configurable"]["checkpoint_id"] for t in saver.list(intruder))
    info = json.loads(run("store", "info", "-s", url, "-f", "json").out)
    text = json.dumps(info)
    assert "plaintext values in an encrypted store" in text
    res = run("compat", "report", "-s", url, "-f", "json", env={"LANGGRAPH_AES_KEY": KEY})
    assert res.code == 0, res.err
    enc_report = json.loads(res.out)["encryption"]
    assert enc_report["plaintext_values"] > 0 and enc_report["first_plaintext_checkpoints"]
    # compat counts the checkpoints' values in its pass over every row: the same census as store info's
    assert f": {enc_report['encrypted_values']} values" in text and f"{enc_report['plaintext_values']} plaintext values" in text
    assert set(enc_report["first_plaintext_checkpoints"]) <= set(ids)
    assert enc_report["first_plaintext_checkpoints"] == sorted(enc_report["first_plaintext_checkpoints"])[:5]
    assert run("compat", "report", "-s", url, "--fail-on", "plaintext", env={"LANGGRAPH_AES_KEY": KEY}).code == 5
    # a plain store has no such finding, and its report is unchanged
    assert "encryption" not in json.loads(run("compat", "report", "-s", plain, "-f", "json").out)


def test_the_key_is_in_no_receipt_manifest_or_progress(pair, tmp_path):
    backend, _, enc = pair
    url = backend.new_store(scenarios=False)
    with backend.saver(enc) as src, backend.saver(url) as dst:
        src.serde = dst.serde = _encrypted_serde(KEY)
        backends.copy_store(src, dst)
    key_file = tmp_path / "aes.key"
    key_file.write_bytes(KEY.encode())
    key_file.chmod(0o600)
    bundle = tmp_path / "bundle"
    exported = run("--aes-key-file", str(key_file), "thread", "export", "-s", url, "--tenant", "acme", "--all-sessions", "-o", str(bundle))
    assert exported.code == 0, exported.err
    receipt = tmp_path / "receipt.jsonl"
    erased = run("thread", "erase", "-s", url, "-t", "acme:_:s-001", "--yes", "--receipt", str(receipt), env={"LANGGRAPH_AES_KEY": KEY})
    assert erased.code == 0, erased.err
    texts = [p.read_bytes() for p in bundle.rglob("*") if p.is_file()] + [receipt.read_bytes()]
    texts += [(exported.out + exported.err + erased.out + erased.err).encode()]
    assert len(texts) > 3
    for t in texts:
        assert KEY.encode() not in t and KEY.encode().hex().encode() not in t
