"""``thread export`` delivers what the store holds: ``retained/<name>.json`` beside each transcript
holds the messages only older checkpoints still hold (compaction removed them), counted in the
manifest; ``--current-only`` leaves them out. On stores a real SymfonicAgent wrote, every kind."""

from __future__ import annotations

import hashlib
import json

import pytest

from symfonic_cli import api
from tests.export.test_export import read_zip
from tests.support import agent_stores as ag
from tests.support.cli import run

KINDS = ("sqlite", "postgres", "mongodb")


@pytest.mark.parametrize("kind", KINDS)
def test_bundle_holds_what_compaction_removed(kind, agent_stores, tmp_path):
    _backend, url = agent_stores(kind)
    out = tmp_path / "bundle.zip"
    r = run("thread", "export", "-s", url, *[a for key in ag.THREADS for a in ("-t", key)], "-o", str(out))
    assert r.code == 0, r.err
    files = read_zip(out)
    manifest = json.loads(files["manifest.json"])
    by_key = {t["key"]: t for t in manifest["threads"]}
    for key, entry in by_key.items():
        retained = [m for m in json.loads(run("transcript", "show", "-s", url, "-t", key, "--retained", "-f", "json").out) if not m["current"]]
        assert entry["retained_messages"] == len(retained)
        if not retained:
            assert entry["retained_file"] is None and "retained_sha256" not in entry
            continue
        data = files[entry["retained_file"]]
        assert json.loads(data) == retained and hashlib.sha256(data).hexdigest() == entry["retained_sha256"]
    long = by_key[ag.LONG]
    transcript = files[long["file"]].decode()
    held = json.loads(files[long["retained_file"]])
    first = next(m for m in held if "question 0 from Ada" in m["content"])
    assert first["removed_by"] == "compaction" and first["message_id"] not in transcript and "question 0 from Ada" not in transcript
    assert set(files) == {"manifest.json", *(t["file"] for t in by_key.values()), *(t["retained_file"] for t in by_key.values() if t["retained_file"])}


def test_current_only_leaves_them_out(agent_stores, tmp_path):
    _backend, url = agent_stores("sqlite")
    out = tmp_path / "current"
    r = run("thread", "export", "-s", url, "-t", ag.LONG, "-o", str(out), "--current-only")
    assert r.code == 0, r.err
    assert not (out / "retained").exists()
    entry = json.loads((out / "manifest.json").read_text())["threads"][0]
    assert "retained_messages" not in entry and "retained_file" not in entry
    record = api.export(url, tmp_path / "api", thread=ag.LONG)
    assert record["threads"] == 1 and (tmp_path / "api" / "retained").is_dir()
    api.export(url, tmp_path / "api-current", thread=ag.LONG, current_only=True)
    assert not (tmp_path / "api-current" / "retained").exists()
    # A bundle with a retained file is a bundle symfonic wrote: --force may replace it.
    assert run("thread", "export", "-s", url, "-t", ag.LONG, "-o", str(tmp_path / "api"), "--force").code == 0
