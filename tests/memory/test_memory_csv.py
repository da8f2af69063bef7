"""``transcript show --retained -f csv`` and ``--resume-window -f csv`` (issue #44, item 11): the
help of ``transcript show`` lists csv, so both views write it, the fields and values of their
JSON records, on every store kind (stores a real SymfonicAgent wrote)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.support import agent_stores as ag
from tests.support import backends
from tests.support.cli import run


@pytest.mark.parametrize("kind", backends.KINDS)
@pytest.mark.parametrize("view", ["--retained", "--resume-window"])
def test_memory_views_write_csv_as_their_json_records(kind, view, agent_stores):
    _backend, url = agent_stores(kind)
    assert "csv" in run("transcript", "show", "--help", env={"COLUMNS": "200"}).out
    for key in ag.THREADS:
        as_json = run("transcript", "show", "-s", url, "-t", key, view, "-f", "json")
        as_csv = run("transcript", "show", "-s", url, "-t", key, view, "-f", "csv")
        assert as_json.code == 0 and as_csv.code == 0, (key, as_json.err, as_csv.err)
        records = json.loads(as_json.out)
        assert records, key
        assert as_csv.out.endswith("\r\n")
        rows = list(csv.reader(io.StringIO(as_csv.out, newline=""), strict=True))
        header, body = rows[0], rows[1:]
        assert header == list(dict.fromkeys(k for rec in records for k in rec))
        assert len(body) == len(records)
        for rec, row in zip(records, body, strict=True):
            for field, got in zip(header, row, strict=True):
                value = rec.get(field)
                if value is None:
                    assert got == "", (key, field)
                elif isinstance(value, str):
                    assert got in (value, "'" + value), (key, field)  # a formula's first character is guarded
                else:
                    assert json.loads(got) == value, (key, field)
