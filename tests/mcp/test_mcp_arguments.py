"""An argument the tools' schema refuses is answered in one line naming the tool and the argument,
as the command line's usage errors are: never pydantic's report of several lines with a URL; the
call still leaves its ``refused`` record in the access log."""

from __future__ import annotations

import json

import pytest

from tests.support.mcp_session import error_line, in_memory

CASES = [
    (("list_threads", {"status": 5}), "list_threads: argument 'status': Input should be a valid list"),
    (("list_threads", {"limit": "x"}), "list_threads: argument 'limit': Input should be a valid integer"),
    (("list_threads", {"limit": 0}), "list_threads: argument 'limit': Input should be greater than or equal to 1"),
    (("get_transcript", {}), "get_transcript: argument 'key': Field required"),
]


@pytest.mark.parametrize("call,line", CASES, ids=[c[0][0] + "-" + next(iter(c[0][1]), "none") for c in CASES])
def test_a_refused_argument_is_one_line(sqlite_store, tmp_path, call, line):
    log = tmp_path / "access.jsonl"
    (result,) = in_memory(str(sqlite_store), [call], tenants=("acme",), log=log)
    text = error_line(result)
    assert text.startswith(line) and "\n" not in text and "http" not in text and "pydantic" not in text, text
    records = [json.loads(r) for r in log.read_text().splitlines()]
    assert [(r["tool"], r["outcome"]) for r in records] == [(call[0], "refused")]
