"""``thread erase`` never hits the wrong thread nor records an erasure that did not happen (issue 12,
items 1, 2, 7, 8): the exact key reader, not-found and already-erased, the receipt file, the output.

Stores are written by real graphs through the real savers; what is left is read back through
``threads list`` and the real saver.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symfonic_cli.inputs import parse_keys
from tests.support.cli import run, run_process
from tests.support.scenarios import scenarios
from tests.erase.test_erase import receipt_of, saved

ALL_KEYS = [sc.key for sc in scenarios()]

LINE_BREAKS = "\n\x0b\x0c\r\x1c\x1d\x1e\x85\u2028\u2029"
WHITESPACE = "\t \xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u202f\u205f\u3000"
INVISIBLE = (
    "\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u034f\u180e\u061c\u200e\u200f"
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u3164\ufe0f"
)
HOSTILE = LINE_BREAKS + WHITESPACE + INVISIBLE
BASE = "hostile:_:bob"
INSIDE = [f"{BASE}{c}x" for c in HOSTILE]
TRAILING = [f"{BASE}{c}" for c in HOSTILE]
HOSTILE_KEYS = [BASE, f"\ufeff{BASE}", f"{BASE.upper()}", *INSIDE, *TRAILING]


def erase(url: str, *args: str, **kw):
    return run("thread", "erase", "-s", url, *args, **kw)


def listed(url: str) -> list[str]:
    r = run("threads", "list", "-s", url, "-f", "json")
    assert r.code == 0, r.err
    return [t["key"] for t in json.loads(r.out)]


def write_threads(backend, url: str, keys: list[str]) -> None:
    """One short conversation per key, through a real graph and the real saver."""
    from langchain_core.messages import HumanMessage

    from tests.support.scenarios import agent_graph

    with backend.saver(url) as saver:
        graph = agent_graph().compile(checkpointer=saver)
        for key in keys:
            graph.invoke({"messages": [HumanMessage(content="hello")]}, {"configurable": {"thread_id": key}})


@pytest.fixture
def hostile(any_kind):
    url = any_kind.new_store()
    write_threads(any_kind, url, HOSTILE_KEYS)
    return any_kind, url


# -- 1. the exact key reader ------------------------------------------------------------------


def test_listed_keys_round_trip_exactly(hostile, tmp_path):
    backend, url = hostile
    everything = set(listed(url))
    assert set(HOSTILE_KEYS) | set(ALL_KEYS) == everything  # every key stored as written

    # A: `threads list -f json`, filtered, as a whole-file JSON array.
    records = json.loads(run("threads", "list", "-s", url, "-f", "json").out)
    batch_a = [r for r in records if r["key"] in INSIDE]
    assert len(batch_a) == len(INSIDE)
    file_a = tmp_path / "a.json"
    file_a.write_text(json.dumps(batch_a, indent=2))
    r = erase(url, "--from-file", str(file_a), "--yes", "-f", "json")
    assert r.code == 0, r.err
    receipt = json.loads(r.out)
    assert sorted(t["key"] for t in receipt["threads"]) == sorted(INSIDE)
    assert {t["status"] for t in receipt["threads"]} == {"erased"}
    assert set(listed(url)) == everything - set(INSIDE)

    # B: `threads list -f jsonl | symfonic thread erase --from-file -` (binary stdin, real process).
    batch_b = set(TRAILING[0::3])
    lines = run("threads", "list", "-s", url, "-f", "jsonl").out.splitlines(keepends=True)
    piped = "".join(line for line in lines if json.loads(line)["key"] in batch_b)
    assert piped.count("\n") == len(batch_b)
    r = run_process("thread", "erase", "-s", url, "--from-file", "-", "--yes", "-f", "jsonl", input=piped)
    assert r.code == 0, r.err
    (receipt_line,) = r.out.splitlines()
    receipt = json.loads(receipt_line)
    assert {t["key"] for t in receipt["threads"]} == batch_b and receipt["summary"]["erased"] == len(batch_b)
    assert set(listed(url)) == everything - set(INSIDE) - batch_b

    # C: plain lines, CRLF endings, a byte order mark first: each key exactly as it stands.
    batch_c = [k for k in TRAILING[1::3] if "\n" not in k]
    file_c = tmp_path / "c.txt"
    file_c.write_bytes(b"\xef\xbb\xbf# ticket 4711\r\n" + b"".join(k.encode() + b"\r\n" for k in batch_c))
    r = erase(url, "--from-file", str(file_c), "--yes")
    assert r.code == 0, r.err
    assert [t["key"] for t in receipt_of(r.out)["threads"]] == batch_c
    left = everything - set(INSIDE) - batch_b - set(batch_c)
    assert set(listed(url)) == left
    assert {BASE, f"\ufeff{BASE}", BASE.upper(), *TRAILING[2::3]} <= left
    assert saved(backend, url, BASE)[0] > 0


def test_key_file_grammar(sqlite_store, tmp_path):
    url = str(sqlite_store)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"acme:_:s-001\n# fine\nacme:\xff:s-002\n")
    from tests.support import backends

    target = backends.get("sqlite").new_store(scenarios=False)
    for cmd in (["thread", "erase", "-s", url], ["migrate", "--from", url, "--to", target]):
        r = run(*cmd, "--from-file", str(bad), "--yes" if cmd[0] == "thread" else "--dry-run")
        assert r.code == 2 and "line 3: not valid UTF-8" in r.err and r.err.count("\n") == 1, r.err
    nokey = tmp_path / "nokey.jsonl"
    nokey.write_text('{"key": "acme:_:s-001"}\n{"thread": "acme:_:s-001"}\n')
    r = erase(url, "--from-file", str(nokey), "--yes")
    assert r.code == 2 and "line 2" in r.err and "'key'" in r.err
    assert set(listed(url)) == set(ALL_KEYS)


def test_migrate_reads_keys_exactly(any_kind, tmp_path):
    url = any_kind.new_store(only=["acme:_:s-001"])
    write_threads(any_kind, url, ["acme:_:s-001\u2028", "acme:_:s-001 ", "acme:_:s-001\r"])
    target = tmp_path / "target.db"
    lines = run("threads", "list", "-s", url, "-f", "jsonl").out
    wanted = [json.loads(line) for line in lines.splitlines() if json.loads(line)["key"] != "acme:_:s-001"]
    keys = tmp_path / "keys.jsonl"
    keys.write_text("".join(json.dumps(w) + "\n" for w in wanted))
    r = run("migrate", "--from", url, "--to", str(target), "--init-target", "--from-file", str(keys), "-f", "json")
    assert r.code == 0, r.err
    assert sorted(t["thread"] for t in json.loads(r.out)["threads"]) == sorted(w["key"] for w in wanted)
    assert sorted(listed(str(target))) == sorted(w["key"] for w in wanted)
    # and from standard input, in a real process
    target2 = tmp_path / "target2.db"
    r = run_process("migrate", "--from", url, "--to", str(target2), "--init-target", "--from-file", "-", input=keys.read_text())
    assert r.code == 0, r.err
    assert sorted(listed(str(target2))) == sorted(w["key"] for w in wanted)


key_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(key_text, max_size=8))
def test_reader_gives_back_any_keys(keys):
    from symfonic_cli.render import json_dumps

    unique = list(dict.fromkeys(keys))
    # As `threads list -f jsonl` writes them, and as `-f json` writes them.
    jsonl = "".join(json_dumps({"key": k, "checkpoints": 1}) + "\n" for k in keys).encode()
    assert parse_keys(jsonl) == unique
    assert parse_keys(("[" + ",".join(json_dumps({"key": k}) for k in keys) + "]").encode()) == unique
    # As plain lines, each key that a line can hold.
    plain = [k for k in unique if "\n" not in k and not k.endswith("\r") and not k.startswith(("#", "{")) and k != "\r"]
    if plain and not plain[0].lstrip(" \t\r\n").startswith("["):
        assert parse_keys(b"\xef\xbb\xbf" + b"".join(k.encode() + b"\n" for k in plain)) == plain


# -- 2. a key that names nothing ----------------------------------------------------------------


def test_sub_tenant_less_key_is_not_found_with_the_right_suggestion(any_kind):
    url = any_kind.new_store()
    # The exact key (--tenant acme --session s-002 now means s-002 under every sub-tenant of acme:
    # tests/erase/test_session_selection.py).
    r = erase(url, "--thread", "acme:_:s-002", "--yes")
    assert r.code == 3, r.err
    assert "no thread 'acme:_:s-002'" in r.err and "did you mean: 'acme:eu:s-002'" in r.err
    (t,) = receipt_of(r.out)["threads"]
    # Suggestions are other people's keys: on stderr only, never in the receipt or on stdout.
    assert t["status"] == "not-found" and "suggestions" not in t and "acme:eu:s-002" not in r.out
    assert set(listed(url)) == set(ALL_KEYS)


@pytest.mark.parametrize(
    "asked, first",
    [
        ("acme:_:s-01", None),  # mistyped: the tenant's threads
        ("\ufeffacme:_:s-001", "acme:_:s-001"),  # a byte order mark glued to the key
        ("acme:_:s-001\xa0", "acme:_:s-001"),
        ("ACME:_:S-001", "acme:_:s-001"),
        ("acme:_:ｓ-001", "acme:_:s-001"),  # fullwidth: NFKC
    ],
)
def test_near_misses_are_suggested_and_nothing_is_erased(sqlite_store, asked, first):
    url = str(sqlite_store)
    before = saved_all(url)
    r = erase(url, "--thread", asked, "--yes")
    assert r.code == 3, r.err
    (t,) = receipt_of(r.out)["threads"]
    assert t["status"] == "not-found" and t["key"] == asked and "suggestions" not in t
    assert "did you mean" in r.err and "\ufeff" not in r.err and "\xa0" not in r.err
    suggestions = [k.strip("'") for k in r.err.split("did you mean: ", 1)[1].strip().split(", ")]
    if first:
        assert suggestions[0] == first
    assert set(suggestions) <= set(ALL_KEYS) and {k for k in suggestions if k.startswith("acme:")}
    assert not any(f"'{k}'" in r.out for k in suggestions)
    assert saved_all(url) == before
    # transcript show gives the same suggestions, the key escaped
    show = run("transcript", "show", "-s", url, "-t", asked)
    assert show.code == 3 and ", ".join(f"'{k}'" for k in suggestions) in show.err
    assert "\ufeff" not in show.err and "\xa0" not in show.err


def saved_all(url: str) -> dict:
    from tests.support import backends

    return {k: saved(backends.get("sqlite"), url, k) for k in ALL_KEYS}


def test_found_threads_are_erased_and_exit_3(any_kind, tmp_path):
    url = any_kind.new_store()
    keys = tmp_path / "keys.txt"
    keys.write_bytes(b"\xef\xbb\xbfglobex:_:s-100\nglobex:_:s-10\n")  # BOM first: dropped
    r = erase(url, "--from-file", str(keys), "--yes")
    assert r.code == 3
    statuses = {t["key"]: t["status"] for t in receipt_of(r.out)["threads"]}
    assert statuses == {"globex:_:s-100": "erased", "globex:_:s-10": "not-found"}
    assert set(listed(url)) == set(ALL_KEYS) - {"globex:_:s-100"}
    r = erase(url, "--from-file", str(keys), "--yes", "--missing-ok")
    assert r.code == 0, r.err
    assert {t["status"] for t in receipt_of(r.out)["threads"]} == {"not-found"}


def test_empty_prefix_selection(sqlite_store):
    url = str(sqlite_store)
    r = erase(url, "--tenant", "nobody", "--all-sessions", "--yes")
    assert r.code == 3 and "no thread matches" in r.err
    r = erase(url, "--tenant", "nobody", "--all-sessions", "--yes", "--missing-ok")
    assert r.code == 0 and receipt_of(r.out)["summary"]["threads"] == 0
    r = erase(url, "--tenant", "acme", "--sub-tenant", "xx", "--all-sessions", "--dry-run")
    assert r.code == 3 and "no thread matches" in r.out


def test_rerun_with_the_receipt_file_is_already_erased(any_kind, tmp_path):
    url = any_kind.new_store()
    audit = tmp_path / "audit.jsonl"
    keys = tmp_path / "keys.txt"
    keys.write_text("acme:_:s-001\nacme:eu:s-002\n")
    first = erase(url, "--from-file", str(keys), "--yes", "--receipt", str(audit), "-f", "json")
    assert first.code == 0, first.err
    first_id = json.loads(first.out)["receipt_id"]
    again = erase(url, "--from-file", str(keys), "--yes", "--receipt", str(audit), "-f", "json")
    assert again.code == 0, again.err
    threads = json.loads(again.out)["threads"]
    assert [t["status"] for t in threads] == ["already-erased"] * 2
    assert all(t["erased_by"]["receipt_id"] == first_id and t["erased_by"]["time"] for t in threads)
    # Another store is another store: there the keys are simply not found.
    other = any_kind.new_store(only=["globex:_:s-101"])
    r = erase(other, "--from-file", str(keys), "--yes", "--receipt", str(audit), "-f", "json")
    assert r.code == 3 and {t["status"] for t in json.loads(r.out)["threads"]} == {"not-found"}
    dry = erase(url, "--from-file", str(keys), "--dry-run", "--receipt", str(audit), "-f", "json")
    assert dry.code == 0 and {t["status"] for t in json.loads(dry.out)["threads"]} == {"already-erased"}


# -- 7. the receipt file ------------------------------------------------------------------------


def test_receipt_at_a_symlink_is_refused(sqlite_store, tmp_path):
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("untouched\n")
    link = tmp_path / "audit.jsonl"
    link.symlink_to(target)
    r = erase(str(sqlite_store), "--thread", "globex:_:s-100", "--yes", "--receipt", str(link))
    assert r.code == 2 and "symbolic link" in r.err and r.err.count("\n") == 1
    assert target.read_text() == "untouched\n"
    assert set(listed(str(sqlite_store))) == set(ALL_KEYS)


def test_receipt_file_mode_operator_ticket(sqlite_store, tmp_path):
    audit = tmp_path / "audit.jsonl"
    r = erase(str(sqlite_store), "--thread", "globex:_:s-100", "--yes", "--receipt", str(audit),
              "--operator", "dpo-jane", "--ticket", "GDPR-4711", "-f", "json")
    assert r.code == 0, r.err
    assert (audit.stat().st_mode & 0o777) == 0o600
    rec = json.loads(r.out)
    assert rec["operator"] == "dpo-jane" and rec["ticket"] == "GDPR-4711"
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [x["record"] for x in lines] == ["start", "thread", "end"]
    assert all(x["operator"] == "dpo-jane" and x["ticket"] == "GDPR-4711" and x["receipt_id"] == rec["receipt_id"] for x in lines)
    assert lines[1]["key"] == "globex:_:s-100" and lines[1]["status"] == "erased"
    assert lines[2]["summary"] == rec["summary"]


def _env_without_login_names() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("USER", "LOGNAME", "LNAME", "USERNAME")}


def test_operator_without_user_or_logname(sqlite_store, tmp_path):
    import pwd

    cmd = [sys.executable, "-m", "symfonic_cli", "thread", "erase", "-s", str(sqlite_store), "--yes", "-f", "json"]
    proc = subprocess.run([*cmd, "--thread", "globex:_:s-100"], capture_output=True, text=True, env=_env_without_login_names(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["operator"] == pwd.getpwuid(os.getuid()).pw_name
    if os.geteuid() == 0:
        # A uid without a password entry (a container's arbitrary user): uid:N, never null. The
        # test's virtualenv may sit where that user cannot read, so the system Python runs the
        # repository's code (the function the command calls; it needs no third-party module).
        uid = next(u for u in range(45000, 46000) if not _has_pwd(u))
        repo = str(Path(__file__).resolve().parents[2])
        code = f"import sys; sys.path.insert(0, {repo!r}); from symfonic_cli.erase.run import default_operator; print(default_operator())"
        proc = subprocess.run(["/usr/bin/python3", "-I", "-c", code], capture_output=True, text=True, env=_env_without_login_names(),
                              user=uid, group=uid, extra_groups=[], cwd="/", timeout=60)
        assert proc.stdout.strip() == f"uid:{uid}", proc.stderr


def _has_pwd(uid: int) -> bool:
    import pwd

    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


@pytest.fixture
def small_fs(tmp_path):
    """A 64 KiB tmpfs, full but for one page."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], check=True)
    try:
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"x" * 4096)
        except OSError:
            pass
        yield mnt, fd
        os.close(fd)
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_receipt_on_a_full_filesystem_stops_before_the_next_thread(sqlite_store, small_fs, tmp_path):
    mnt, filler = small_fs
    os.ftruncate(filler, os.fstat(filler).st_size - 4096)  # one page left
    url = str(sqlite_store)
    before = saved_all(url)
    keys = tmp_path / "keys.txt"
    keys.write_text("\n".join(ALL_KEYS) + "\n")
    audit = mnt / "audit.jsonl"

    r = run_process("thread", "erase", "-s", url, "--from-file", str(keys), "--yes", "--receipt", str(audit), "-f", "json")

    assert r.code == 4, r.err
    assert "No space left on device" in r.err and "stopped before the next thread" in r.err
    after = saved_all(url)
    erased = [k for k in ALL_KEYS if after[k][0] == 0]
    assert 1 <= len(erased) < len(ALL_KEYS)
    assert erased == ALL_KEYS[: len(erased)]  # in order, and nothing after the stop
    assert all(after[k] == before[k] for k in ALL_KEYS[len(erased):])
    receipt = json.loads(r.out)  # the only thing on stdout, complete
    assert [t["key"] for t in receipt["threads"] if t["status"] == "erased"] == erased
    assert {t["status"] for t in receipt["threads"][len(erased):]} == {"not-attempted"}
    assert "No space left" in receipt["stopped"]
    for k in erased:
        assert f"'{k}'" in r.err and f"erased {k}" in r.err
    # Every erasure the file records happened; at most the last one is missing from it.
    recorded = []
    for line in audit.read_bytes().split(b"\n"):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("record") == "thread":
            recorded.append(rec["key"])
    assert recorded == erased or recorded == erased[:-1]


def test_receipt_on_a_full_filesystem_erases_nothing(sqlite_store, small_fs):
    mnt, _ = small_fs
    url = str(sqlite_store)
    r = erase(url, "--tenant", "acme", "--all-sessions", "--yes", "--receipt", str(mnt / "audit.jsonl"))
    assert r.code == 4 and "nothing erased" in r.err, r.err
    assert not [line for line in r.out.splitlines() if line.startswith("erased ")]
    assert set(listed(url)) == set(ALL_KEYS)


# -- 8. output -----------------------------------------------------------------------------------


def test_json_formats_are_the_only_thing_on_stdout(any_kind):
    url = any_kind.new_store()
    dry = erase(url, "--tenant", "acme", "--all-sessions", "--dry-run", "-f", "json")
    assert dry.code == 0, dry.err
    plan = json.loads(dry.out)
    assert plan["dry_run"] is True and plan["summary"]["to_erase"] == 4
    assert {t["key"] for t in plan["threads"]} == {k for k in ALL_KEYS if k.startswith("acme:")}
    dry = erase(url, "--thread", "acme:_:nope", "--dry-run", "-f", "jsonl")
    assert dry.code == 3 and len(dry.out.splitlines()) == 1
    assert json.loads(dry.out)["threads"][0]["status"] == "not-found"
    r = erase(url, "--thread", "globex:_:s-100", "--yes", "-f", "jsonl")
    assert r.code == 0 and len(r.out.splitlines()) == 1
    assert json.loads(r.out)["threads"][0]["status"] == "erased"
    assert "erased globex:_:s-100" in r.err  # progress goes to stderr
    r = erase(url, "--thread", "globex:_:s-100", "--yes", "-f", "json")
    assert r.code == 3 and json.loads(r.out)["threads"][0]["status"] == "not-found"


def test_look_alike_keys_never_print_the_same(hostile):
    backend, url = hostile
    r = erase(url, "--tenant", "hostile", "--all-sessions", "--dry-run", "-f", "text")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    plan_lines = [line for line in lines if line.startswith("  hostile:") or line.startswith("  \\ufeff")]
    shown = [line.split(": 1", 1)[0] for line in plan_lines]
    assert len(shown) == len(set(shown)) == len([k for k in HOSTILE_KEYS if k.startswith("hostile:")])
    for line in lines:
        assert all(c.isprintable() for c in line), repr(line)
    assert "  hostile:_:bob\\u2028x: " in r.out and "  hostile:_:bob\\u00a0: " in r.out and "  hostile:_:bob\\x85x: " in r.out
    table = erase(url, "--thread", "hostile:_:bob\u2028x", "--dry-run", "-f", "table", env={"COLUMNS": "200"})
    assert table.code == 0, table.err
    assert "hostile:_:bob\\u2028x" in table.out and "┃ rows ┃" in table.out
    for line in table.out.splitlines():
        assert all(c.isprintable() for c in line), repr(line)


def test_store_name_is_escaped(sqlite_store, tmp_path):
    evil = tmp_path / "evil\x1b]0;pwned\x07\u2028.db"
    os.rename(sqlite_store, evil)
    r = erase(str(evil), "--thread", "globex:_:s-100", "--dry-run")
    assert r.code == 0, r.err
    assert "\x1b" not in r.out and "\x07" not in r.out and "\u2028" not in r.out
    assert "evil\\x1b]0;pwned\\x07\\u2028.db" in r.out.splitlines()[0]


def _pty_run(args, tmp_path, *, answer: str, stdin_data: bytes | None = None):
    """Run symfonic with stderr (and stdin, unless data is piped) on a pseudo-terminal of 80
    columns that is the process's controlling terminal; stdout goes to a file."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))

    def controlling_terminal():
        import signal

        os.setsid()
        fcntl.ioctl(2, termios.TIOCSCTTY, 0)
        # A suite run as a background job ignores SIGINT, and a child inherits that: an operator's
        # terminal delivers Ctrl-C, so the command gets the default disposition back.
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    out_path = tmp_path / "stdout.txt"
    with open(out_path, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "symfonic_cli", *args],
            stdin=subprocess.PIPE if stdin_data is not None else slave, stdout=out, stderr=slave,
            preexec_fn=controlling_terminal,
        )
        os.close(slave)
        if stdin_data is not None:
            proc.stdin.write(stdin_data)
            proc.stdin.close()
        seen = b""
        while b"Type the" not in seen:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the command exited (and closed the terminal) without asking
                chunk = b""
            assert chunk, (proc.wait(timeout=60), seen.decode(errors="replace"))
            seen += chunk
        os.write(master, answer.encode() + b"\n")
        proc.wait(timeout=60)
    try:
        while True:
            rest = os.read(master, 4096)
            if not rest:
                break
            seen += rest
    except OSError:
        pass
    os.close(master)
    return proc.returncode, seen.decode(), out_path.read_text()


def test_plan_and_prompt_on_the_terminal_when_stdout_is_a_file(sqlite_store, tmp_path):
    code, terminal, stdout = _pty_run(["thread", "erase", "-s", str(sqlite_store), "--thread", "globex:_:s-100"], tmp_path, answer="globex:_:s-100")
    assert code == 0, terminal
    assert "erase plan for" in terminal and "globex:_:s-100: " in terminal and "Type the thread key" in terminal
    assert "erase plan for" not in stdout
    assert receipt_of(stdout)["threads"][0]["status"] == "erased"


def test_keys_on_stdin_confirmed_on_the_terminal(sqlite_store, tmp_path):
    code, terminal, stdout = _pty_run(
        ["thread", "erase", "-s", str(sqlite_store), "--from-file", "-", "-f", "json"], tmp_path,
        answer="2", stdin_data=b'{"key": "acme:eu:s-002"}\nacme:eu:s-003\n',
    )
    assert code == 0, terminal
    assert "acme:eu:s-002: " in terminal and "acme:eu:s-003: " in terminal and "Type the number of threads (2)" in terminal
    assert {t["key"] for t in json.loads(stdout)["threads"]} == {"acme:eu:s-002", "acme:eu:s-003"}
    assert set(listed(str(sqlite_store))) == set(ALL_KEYS) - {"acme:eu:s-002", "acme:eu:s-003"}


def test_keys_on_stdin_without_a_terminal_need_yes(sqlite_store):
    r = run_process("thread", "erase", "-s", str(sqlite_store), "--from-file", "-", input="acme:eu:s-002\n")
    assert r.code == 6 and "--yes" in r.err
    assert set(listed(str(sqlite_store))) == set(ALL_KEYS)


def _unescape(shown: str) -> str:
    """The inverse of escape_inline: exists only because no two strings print the same."""
    import re

    table = {"\\": "\\", "n": "\n", "t": "\t"}
    return re.sub(
        r"\\(?:([\\nt])|x([0-9a-f]{2})|u([0-9a-f]{4})|U([0-9a-f]{8}))",
        lambda m: table[m.group(1)] if m.group(1) else chr(int(m.group(2) or m.group(3) or m.group(4), 16)),
        shown,
    )


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(st.one_of(st.characters(), st.sampled_from(HOSTILE + "\\")), max_size=20))
def test_escaped_text_is_printable_and_names_one_string(text):
    from symfonic_cli.render import escape_inline

    shown = escape_inline(text)
    assert all(c.isprintable() for c in shown)
    assert not any(c in HOSTILE and c != " " for c in shown)
    assert _unescape(shown) == text


def test_receipt_names_the_store_absolute_or_masked(any_kind, tmp_path, monkeypatch):
    from urllib.parse import urlsplit

    from symfonic_cli.location import mask_url

    url = any_kind.new_store()
    audit = tmp_path / "audit.jsonl"
    if any_kind.kind == "sqlite":
        monkeypatch.chdir(Path(url).parent)
        given, expected = Path(url).name, url  # relative on the command line, absolute in the receipt
    else:
        given, expected = url, mask_url(url)
    r = erase(given, "--thread", "globex:_:s-100", "--yes", "--receipt", str(audit), "-f", "json")
    assert r.code == 0, r.err
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert {x["store"] for x in lines} == {json.loads(r.out)["store"]} == {expected}
    password = urlsplit(url).password
    assert password or any_kind.kind != "postgres"  # the test cluster has a real password
    if password:
        from urllib.parse import unquote

        assert "***" in expected
        for text in (audit.read_text(), r.out, r.err):
            assert password not in text and unquote(password) not in text


def test_confirmation_takes_the_key_exactly_or_as_shown(sqlite_store, monkeypatch):
    from symfonic_cli.environment import Environment
    from tests.support import backends

    url = str(sqlite_store)
    key = "acme:_:bob\xa0"
    write_threads(backends.get("sqlite"), url, [key, "acme:_:bob", "acme:_:bob "])
    monkeypatch.setattr(Environment, "stdin_isatty", lambda self: True)
    for look_alike in ("acme:_:bob", "acme:_:bob ", " acme:_:bob\xa0"):
        r = erase(url, "--thread", key, input=look_alike + "\n")
        assert r.code == 6 and "nothing erased" in r.err
        assert "acme:_:bob\\u00a0: " in r.err  # the plan, on the terminal, shows it escaped
    assert key in listed(url)
    r = erase(url, "--thread", key, input="acme:_:bob\\u00a0\n")  # as the plan shows it
    assert r.code == 0, r.err
    assert {"acme:_:bob", "acme:_:bob "} <= set(listed(url)) and key not in listed(url)
