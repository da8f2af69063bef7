"""``symfonic thread export`` on every store kind: stores written by real graphs, exported through
the CLI, each file compared with what ``transcript show --format json`` prints for its thread."""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
import unicodedata
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symfonic_cli.export.names import UniqueNames, safe_stem
from tests.support.cli import run
from tests.support.hostile import fingerprint
from tests.support.scenarios import scenarios

ALL_KEYS = [sc.key for sc in scenarios()]
ACME = [k for k in ALL_KEYS if k.startswith("acme:")]
# Keys an attacker or a careless integration could store: separators, dot runs, controls, keys
# that differ only in case or in Unicode normalisation, a leading dot or dash, a very long key.
HOSTILE_KEYS = [
    "../../etc/passwd",
    "a/b\\c:_:d",
    "ACME:_:Case",
    "acme:_:case",
    "caf\u00e9:_:nfc",
    "cafe\u0301:_:nfc",
    ".hidden",
    "-rf",
    "\x1b[31mred\x1b[0m\ttab\nnewline",
    "con",
    "x" * 300,
    "\u202eexe.txt",
]


@pytest.fixture
def store(any_kind):
    return any_kind, any_kind.new_store()


def export(url: str, *args: str, **kw):
    return run("thread", "export", "-s", url, *args, **kw)


def show_json(url: str, key: str, *extra: str) -> bytes:
    r = run("transcript", "show", "-s", url, "-t", key, "-f", "json", *extra)
    assert r.code == 0, r.err
    return r.out.encode("utf-8")


def read_dir(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)).replace(os.sep, "/"): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def read_zip(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


def read_tar(path: Path) -> dict[str, bytes]:
    with tarfile.open(path, "r:gz") as t:
        return {m.name: t.extractfile(m).read() for m in t.getmembers() if m.isfile()}


def check_bundle(files: dict[str, bytes], url: str, keys: list[str], *extra: str) -> dict:
    """Every transcript file equals transcript show's output byte for byte; hashes match; the
    manifest names every file of the bundle and every selected key once."""
    manifest = json.loads(files["manifest.json"])
    assert sorted(t["key"] for t in manifest["threads"]) == sorted(keys)
    named = {"manifest.json"}
    for t in manifest["threads"]:
        data = files[t["file"]]
        assert data == show_json(url, t["key"], *extra)
        assert hashlib.sha256(data).hexdigest() == t["sha256"]
        assert t["rows"] == len(json.loads(data))
        assert t["first_activity"] <= t["last_activity"]
        named.add(t["file"])
        if "state_file" in t:
            assert hashlib.sha256(files[t["state_file"]]).hexdigest() == t["state_sha256"]
            named.add(t["state_file"])
        if t.get("retained_file"):
            assert hashlib.sha256(files[t["retained_file"]]).hexdigest() == t["retained_sha256"]
            assert len(json.loads(files[t["retained_file"]])) == t["retained_messages"] > 0
            named.add(t["retained_file"])
    assert set(files) == named
    return manifest


# -- the bundle ---------------------------------------------------------------------------------


def test_directory_bundle_equals_transcript_show_and_store_unchanged(store, tmp_path):
    backend, url = store
    before = fingerprint(backend.kind, url)
    out = tmp_path / "bundle"
    r = export(url, "--tenant", "acme", "--all-sessions", "--output", str(out))
    assert r.code == 0, r.err
    assert f"exported {len(ACME)} thread(s)" in r.out
    manifest = check_bundle(read_dir(out), url, ACME)
    assert manifest["selection"] == {"tenant": "acme", "sub_tenant": None, "all_sessions": True}
    assert manifest["tool_version"] and manifest["created"].endswith("Z")
    assert all(t["rows"] > 0 for t in manifest["threads"])
    assert fingerprint(backend.kind, url) == before
    # Personal data: the bundle is private to its owner.
    assert (out.stat().st_mode & 0o777) == 0o700
    assert all((p.stat().st_mode & 0o777) == 0o600 for p in out.rglob("*.json"))


def test_zip_and_tar_gz_unpack_to_the_same_files_with_tools_and_state(store, tmp_path):
    backend, url = store
    keys_file = tmp_path / "keys.txt"
    keys_file.write_text("\n".join(ALL_KEYS) + "\n", encoding="utf-8")
    before = fingerprint(backend.kind, url)
    bundles = {}
    for name in ("b.zip", "b.tar.gz", "b-dir"):
        r = export(url, "--from-file", str(keys_file), "--tools", "--with-state", "-o", str(tmp_path / name))
        assert r.code == 0, r.err
    bundles["zip"] = read_zip(tmp_path / "b.zip")
    bundles["tar"] = read_tar(tmp_path / "b.tar.gz")
    bundles["dir"] = read_dir(tmp_path / "b-dir")
    for files in bundles.values():
        manifest = check_bundle(files, url, ALL_KEYS, "--tools")
        assert manifest["selection"]["threads"] == len(ALL_KEYS)
    # Same files, byte for byte, except the manifest's creation time.
    def strip(files: dict) -> dict:
        return {n: (b if n != "manifest.json" else {k: v for k, v in json.loads(b).items() if k != "created"}) for n, b in files.items()}

    assert strip(bundles["zip"]) == strip(bundles["tar"]) == strip(bundles["dir"])
    # --with-state: the latest checkpoint's channels, messages among them.
    manifest = json.loads(bundles["zip"]["manifest.json"])
    entry = next(t for t in manifest["threads"] if t["key"] == "acme:_:s-001")
    state = json.loads(bundles["zip"][entry["state_file"]])
    assert state["key"] == "acme:_:s-001" and "messages" in state["channels"]
    assert "What is the status of order 1042?" in json.dumps(state["channels"]["messages"])
    # --tools adds the tool-call fields.
    rows = json.loads(bundles["zip"][entry["file"]])
    assert any("tool_calls" in r for r in rows)
    assert fingerprint(backend.kind, url) == before


def write_threads(backend, url: str, keys: list[str]) -> None:
    from langchain_core.messages import HumanMessage

    from tests.support.scenarios import agent_graph

    with backend.saver(url) as saver:
        graph = agent_graph().compile(checkpointer=saver)
        for i, key in enumerate(keys):
            graph.invoke({"messages": [HumanMessage(content=f"message {i}", id=f"h-{i}")]}, {"configurable": {"thread_id": key}})


def test_hostile_keys_give_safe_unique_names(any_kind, tmp_path):
    url = any_kind.new_store(scenarios=False)
    write_threads(any_kind, url, HOSTILE_KEYS)
    keys_file = tmp_path / "keys.json"
    keys_file.write_text(json.dumps([{"key": k} for k in HOSTILE_KEYS]), encoding="utf-8")
    for name in ("h.tar.gz", "h"):
        r = export(url, "--from-file", str(keys_file), "-o", str(tmp_path / name))
        assert r.code == 0, r.err
    files = read_dir(tmp_path / "h")
    manifest = check_bundle(files, url, HOSTILE_KEYS)
    names = [t["file"] for t in manifest["threads"]]
    # Unique even after a file system folds case or normalises Unicode.
    folded = {unicodedata.normalize("NFC", n).casefold() for n in names}
    assert len(folded) == len(HOSTILE_KEYS)
    for n in names:
        folder, base = n.split("/")
        assert folder == "transcript" and base.endswith(".json")
        assert not base.startswith((".", "-")) and ".." not in base and len(base) < 100
        assert all(c.isascii() and (c.isalnum() or c in "-_.") for c in base)
    assert read_tar(tmp_path / "h.tar.gz").keys() == files.keys()
    # Nothing was written outside the bundle.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h", "h.tar.gz", "keys.json"]


@settings(max_examples=200, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(min_size=1, max_size=80), min_size=1, max_size=20, unique=True))
def test_generated_keys_give_safe_unique_stems(keys):
    names = UniqueNames()
    stems = [names.stem(k) for k in keys]
    assert len({s.casefold() for s in stems}) == len(keys)
    for key, stem in zip(keys, stems):
        assert stem == safe_stem(key)  # no digest collision among generated keys
        assert stem and not stem.startswith((".", "-")) and len(stem) <= 80
        assert all(c.isascii() and (c.isalnum() or c in "-_") for c in stem)


# -- never overwrite, not found -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["x.zip", "x.tar.gz", "x-dir"])
def test_existing_bundle_refused_without_force(sqlite_store, tmp_path, name):
    url = str(sqlite_store)
    target = tmp_path / name
    assert export(url, "-t", "acme:_:s-001", "-o", str(target)).code == 0
    before = read_dir(target) if target.is_dir() else target.read_bytes()
    r = export(url, "-t", "acme:eu:s-002", "-o", str(target))
    assert r.code == 2 and "exists" in r.err and "--force" in r.err and r.out == ""
    assert (read_dir(target) if target.is_dir() else target.read_bytes()) == before
    r = export(url, "-t", "acme:eu:s-002", "-o", str(target), "--force")
    assert r.code == 0, r.err
    files = read_dir(target) if target.is_dir() else (read_zip(target) if name.endswith(".zip") else read_tar(target))
    check_bundle(files, url, ["acme:eu:s-002"])
    # No partial files left beside the bundle.
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "store.db") == [name]


def test_force_never_deletes_a_directory_that_is_not_a_bundle(sqlite_store, tmp_path):
    target = tmp_path / "documents"
    target.mkdir()
    (target / "thesis.txt").write_text("precious")
    r = export(str(sqlite_store), "-t", "acme:_:s-001", "-o", str(target), "--force")
    assert r.code == 2 and "no bundle" in r.err
    assert (target / "thesis.txt").read_text() == "precious"


def test_not_found_exits_3_and_writes_nothing_unless_missing_ok(store, tmp_path):
    backend, url = store
    out = tmp_path / "b.zip"
    r = export(url, "-t", "acme:_:s-00", "-o", str(out))
    assert r.code == 3 and "acme:_:s-001" in r.err and not out.exists()
    keys_file = tmp_path / "keys.txt"
    keys_file.write_text("acme:_:s-001\nnobody:_:here\n", encoding="utf-8")
    r = export(url, "--from-file", str(keys_file), "-o", str(out))
    assert r.code == 3 and "nobody:_:here" in r.err and not out.exists()
    r = export(url, "--from-file", str(keys_file), "-o", str(out), "--missing-ok", "-f", "json")
    assert r.code == 0, r.err
    assert json.loads(r.out) == {"output": str(out), "format": "zip", "threads": 1, "not_found": ["nobody:_:here"]}
    manifest = check_bundle(read_zip(out), url, ["acme:_:s-001"])
    assert manifest["not_found"] == ["nobody:_:here"]
    r = export(url, "--tenant", "nobody", "--all-sessions", "-o", str(tmp_path / "none"))
    assert r.code == 3 and not (tmp_path / "none").exists()


def test_usage_errors(sqlite_store, tmp_path):
    url = str(sqlite_store)
    assert export(url, "-t", "acme:_:s-001").code == 2
    r = export(url, "-t", "acme:_:s-001", "-o", str(tmp_path / "missing" / "b.zip"))
    assert r.code == 2 and "does not exist" in r.err
    assert export(url, "--all-sessions", "-o", str(tmp_path / "b")).code == 2
    assert export(url, "--from-file", "-", "-t", "x", "-o", str(tmp_path / "b")).code == 2


# -- --force replaces only a bundle symfonic wrote (issue 21 item 2) ----------------------------


def _tree(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


def test_force_never_deletes_a_web_site_holding_a_manifest(sqlite_store, tmp_path):
    site = tmp_path / "site"
    (site / "icons").mkdir(parents=True)
    (site / "index.html").write_text("<html>home</html>")
    (site / "icons" / "logo.png").write_bytes(b"\x89PNG")
    (site / "manifest.json").write_text(json.dumps({"name": "App", "icons": [{"src": "icons/logo.png"}]}))
    before = _tree(site)
    r = export(str(sqlite_store), "-t", "acme:_:s-001", "-o", str(site), "--force")
    assert r.code == 2 and "not a bundle symfonic wrote" in r.err, r.err
    assert _tree(site) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "store.db") == ["site"]


@pytest.mark.parametrize("name", ["x.zip", "x.tar.gz", "x-dir"])
def test_force_refuses_a_bundle_holding_a_file_its_manifest_does_not_list(sqlite_store, tmp_path, name):
    url = str(sqlite_store)
    target = tmp_path / name
    assert export(url, "-t", "acme:_:s-001", "-o", str(target)).code == 0
    if name.endswith(".zip"):
        with zipfile.ZipFile(target, "a") as z:
            z.writestr("notes/mine.txt", "precious")
    elif name.endswith(".tar.gz"):
        import io

        files = read_tar(target)
        with tarfile.open(target, "w:gz") as t:
            for n, data in {**files, "mine.txt": b"precious"}.items():
                info = tarfile.TarInfo(n)
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    else:
        (target / "transcript" / "mine.txt").write_text("precious")
    before = _tree(target) if target.is_dir() else target.read_bytes()
    r = export(url, "-t", "acme:eu:s-002", "-o", str(target), "--force")
    assert r.code == 2 and "does not list" in r.err and "mine.txt" in r.err, r.err
    assert (_tree(target) if target.is_dir() else target.read_bytes()) == before


@pytest.mark.parametrize("name", ["x.zip", "x.tar.gz"])
def test_force_refuses_an_archive_symfonic_did_not_write(sqlite_store, tmp_path, name):
    target = tmp_path / name
    if name.endswith(".zip"):
        with zipfile.ZipFile(target, "w") as z:
            z.writestr("manifest.json", json.dumps({"name": "photos"}))
            z.writestr("holiday.jpg", b"\xff\xd8")
    else:
        target.write_bytes(b"not an archive at all")
    before = target.read_bytes()
    r = export(str(sqlite_store), "-t", "acme:_:s-001", "-o", str(target), "--force")
    assert r.code == 2 and "not a bundle symfonic wrote" in r.err, r.err
    assert target.read_bytes() == before


@pytest.mark.parametrize("name", ["k.zip", "k-dir"])
def test_a_partial_bundle_of_a_killed_export_is_named_and_removed_by_the_next(any_kind, tmp_path, name):
    import signal
    import subprocess
    import sys
    import time

    url = any_kind.new_store()
    target = tmp_path / name
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYMFONIC_") or k.startswith(("SYMFONIC_TEST_", "SYMFONIC_REQUIRE_"))}
    env["SYMFONIC_FAULT_SLOW_THREAD"] = "2"
    proc = subprocess.Popen([sys.executable, "-m", "symfonic_cli", "thread", "export", "-s", url, "--tenant", "acme",
                             "--all-sessions", "-o", str(target)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not [p for p in tmp_path.iterdir() if ".partial-" in p.name] and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    partials = [p for p in tmp_path.iterdir() if p.name.startswith(f".{name}.partial-")]
    assert len(partials) == 1 and not target.exists()
    r = export(url, "--tenant", "acme", "--all-sessions", "-o", str(target))
    assert r.code == 0, r.err
    assert "partial bundle" in r.err and str(partials[0]) in r.err
    assert not partials[0].exists() and not [p for p in tmp_path.iterdir() if ".partial-" in p.name]
    check_bundle(read_dir(target) if target.is_dir() else read_zip(target), url, ACME)
