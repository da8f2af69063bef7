"""The export manifest writes its times in the clock's one ISO form (``Z``), on every store kind."""

from __future__ import annotations

import json

from tests.support.cli import run


def test_the_export_manifest_writes_times_with_z(any_kind, tmp_path):
    url = any_kind.new_store()
    out = tmp_path / "bundle"
    r = run("thread", "export", "-s", url, "-t", "acme:_:s-001", "-o", str(out))
    assert r.code == 0, r.err
    manifest = json.loads((out / "manifest.json").read_text())
    times = [manifest["created"]] + [t[f] for t in manifest["threads"] for f in ("first_activity", "last_activity")]
    assert times and all(t.endswith("Z") and "+00:00" not in t for t in times), times
