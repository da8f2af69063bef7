"""Every format of a listing in bounded memory (issue #45 item 2), with the bytes it always wrote.

JSON and CSV wait in a spool (memory, then a temporary file) until complete; a table of more than
``TABLE_PAGE`` rows is written a page at a time with the first page's widths. Each is compared
with what the format wrote when it held every row (the rule written out here: the old writers).
"""

from __future__ import annotations

import io
import json

from symfonic_cli.render.escape import _RecordEncoder
from symfonic_cli.render.writers import RECORD_WRITERS, _csv_line, csv_field
from tests.support.environment import MockEnvironment

COLUMNS = ("key", "checkpoints", "note")


def _records(n: int, width: int = 0) -> list[dict]:
    return [{"key": f"acme:_:s-{i:06d}", "checkpoints": i % 7, "note": "x" * width + f" {i}\n\"q\", =1"} for i in range(n)]


def _write(fmt: str, records, **layout) -> str:
    out = io.StringIO()
    n = RECORD_WRITERS[fmt](iter(records), COLUMNS, out, headers=list(COLUMNS), title=None, environment=MockEnvironment(), **layout)
    assert n == len(records)
    return out.getvalue()


def _json_whole(records: list[dict]) -> str:
    dumps = _RecordEncoder(COLUMNS).dumps
    return "[" + "".join(("," if i else "") + "\n  " + dumps(r) for i, r in enumerate(records)) + ("\n]\n" if records else "]\n")


def _csv_whole(records: list[dict]) -> str:
    fields = list(dict.fromkeys(name for rec in records for name in rec)) if records else list(COLUMNS)
    return "".join([_csv_line(fields)] + [_csv_line([csv_field(rec.get(f)) for f in fields]) for rec in records])


def test_json_larger_than_the_spool_memory_is_the_whole_document():
    records = _records(6000, width=2000)  # about 12 MB: past the 8 MB the spool keeps in memory
    text = _write("json", records)
    assert text == _json_whole(records)
    assert len(json.loads(text)) == 6000
    assert _write("json", []) == "[]\n"


def test_csv_with_a_field_a_later_record_brings():
    records = _records(1200, width=10)
    records[700]["status"] = "done"  # a field the rows before lack: empty there, as before
    records[900]["size_bytes"] = 12
    assert _write("csv", records) == _csv_whole(records)
    assert _write("csv", _records(3)) == _csv_whole(_records(3))
    assert _write("csv", []) == _csv_whole([])


def test_a_long_table_is_the_one_table_when_every_row_is_as_wide():
    from symfonic_cli.render.tables import TABLE_PAGE, write_table

    records = _records(TABLE_PAGE * 2 + 17)
    rows = [[r["key"], str(r["checkpoints"])] for r in records]
    env = MockEnvironment()
    whole = io.StringIO()
    write_table(rows, ["key", "checkpoints"], whole=[True, False], title="t", environment=env, stream=whole, clip=[False, False])
    paged = io.StringIO()
    from symfonic_cli.render.tables import write_table_pages

    assert write_table_pages(iter(rows), ["key", "checkpoints"], whole=[True, False], title="t", environment=env, stream=paged,
                             clip=[False, False]) == len(rows)
    assert paged.getvalue() == whole.getvalue()


def test_a_longer_key_on_a_later_page_widens_that_page_only_and_the_header_is_written_once():
    from symfonic_cli.render.tables import TABLE_PAGE, write_table_pages

    rows = [[f"acme:_:s-{i:06d}", "done"] for i in range(TABLE_PAGE * 2)]
    rows[TABLE_PAGE + 5][0] = "acme:_:a-much-longer-session-name"
    out = io.StringIO()
    write_table_pages(iter(rows), ["key", "status"], whole=[True, False], title=None, environment=MockEnvironment(), stream=out,
                      clip=[False, False])
    lines = out.getvalue().splitlines()
    assert sum(1 for line in lines if line.startswith("key ")) == 1
    assert len(lines) == len(rows) + 2  # the header and its rule
    first, second = lines[2], lines[2 + TABLE_PAGE]
    assert first.index("│") == len("acme:_:s-000000") + 1
    assert second.index("│") == len("acme:_:a-much-longer-session-name") + 1
    assert "acme:_:a-much-longer-session-name" in out.getvalue()  # whole, never cut
