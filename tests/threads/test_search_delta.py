"""threads search on stores holding DeltaChannel threads (issue 33 item 3), on every store kind,
plain and encrypted (with the key): the hits are exactly the rows of ``transcript show`` holding
the text, a text that matches nothing is no hit and exit 0, never a raw error."""

from __future__ import annotations

import json

from tests.support.cli import run
from tests.support.delta_scenarios import DELTA_KEYS, write_delta_scenarios
from tests.transcript.test_encrypted import KEY, _encrypted_serde

NEEDLES = ("question 3", "ECHO", "result for beta", "zzz-not-there")


def _transcripts(url: str, env: dict[str, str]) -> dict[str, list[dict]]:
    out = {}
    for key in DELTA_KEYS:
        r = run("transcript", "show", "-s", url, "-t", key, "-f", "json", env=env)
        assert r.code == 0, r.err
        out[key] = json.loads(r.out)
    return out


def _expected(transcripts: dict[str, list[dict]], needle: str) -> set[tuple[str, int]]:
    return {(key, row["index"]) for key, rows in transcripts.items() for row in rows
            if needle.casefold() in (row["content"] or "").casefold()}


def test_search_on_delta_stores_plain_and_encrypted(any_kind):
    for encrypted in (False, True):
        url = any_kind.new_store()  # the shared scenarios beside the DeltaChannel threads
        env = {"LANGGRAPH_AES_KEY": KEY} if encrypted else {}
        with any_kind.saver(url) as saver:
            if encrypted:
                saver.serde = _encrypted_serde(KEY)
            write_delta_scenarios(saver, 3)
        transcripts = _transcripts(url, env)
        for needle in NEEDLES:
            r = run("threads", "search", "-s", url, needle, "-f", "json", env=env)
            assert r.code == 0, (encrypted, needle, r.err)
            hits = {(h["key"], h["index"]) for h in json.loads(r.out) if h["key"].startswith("delta:")}
            assert hits == _expected(transcripts, needle), (encrypted, needle)
            assert (needle == "zzz-not-there") == (not hits), needle
        # The Python API's Store.search gives the same, and text mode exits 0 too.
        import os
        from unittest import mock

        from symfonic_cli import open_store

        with mock.patch.dict(os.environ, env), open_store(url) as st:
            assert {(h["key"], h["index"]) for h in st.search("ECHO") if h["key"].startswith("delta:")} == _expected(transcripts, "ECHO")
        assert run("threads", "search", "-s", url, "zzz-not-there", env=env).code == 0
