"""``threads list --columns``: which columns a listing shows, in which order, and the optional
``first_message`` column (the thread's first user message)."""

from __future__ import annotations

from symfonic_cli.api.listing import THREAD_COLUMNS
from symfonic_cli.errors import UsageError

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# What --columns may name; a table shows TABLE_COLUMNS unless told (tenant, sub-tenant and session
# repeat the key: JSON, text and --columns carry them), so it fits 80 columns with whole keys.
COLUMN_NAMES = THREAD_COLUMNS + ("status", "size_bytes", "first_message")
# A table's headers, short enough that key, checkpoints, last activity, status and size fit 80.
TABLE_HEADERS = {"sub_tenant": "sub-tenant", "first_activity": "first activity", "last_activity": "last activity",
                 "size_bytes": "size", "first_message": "first message"}
# What a person reads, the same on a terminal (table) and in a pipe (text, tab-separated): the run
# state is what one looks for first. JSON keeps every field; --wide shows every column (kubectl -o wide).
TABLE_COLUMNS = ("key", "status", "checkpoints", "last_activity")
# The first user message: on one line (its white space runs made one space); a table cuts it to the
# room the terminal has (render/clip.py, never inside a character), text and JSON keep it whole.
CLIPPED = ("first_message",)


def parse_columns(text: Optional[str]) -> Optional[tuple]:
    """``--columns a,b,c``: names of COLUMN_NAMES, in the order given (case-insensitive)."""
    if text is None:
        return None
    names = tuple(w.strip().lower().replace("-", "_") for w in text.split(","))
    names = tuple("first_message" if n == "first" else n for n in names)  # "first": the first user message
    for name in names:
        if name not in COLUMN_NAMES:
            raise UsageError(f"unknown column '{name}' in --columns", hint=f"use any of: {', '.join(COLUMN_NAMES)}")
    if len(set(names)) != len(names):
        raise UsageError("--columns names a column twice")
    return names


def default_columns(out_format: str, *, wide: bool, with_size: bool) -> Optional[tuple]:
    """The columns of a listing given no --columns: every one with --wide; the table's (plus the
    size with --with-size) in table and text alike; None (every field) in JSON."""
    if wide:
        return COLUMN_NAMES
    from symfonic_cli.render.writers import is_data  # here: --help loads no renderer

    if not is_data(out_format):
        return TABLE_COLUMNS + (("size_bytes",) if with_size else ())
    return None


def _shown_columns(chosen, out_format: str, every: tuple) -> tuple:
    return every if chosen is None else chosen


def _headers(columns: tuple, out_format: str) -> tuple:
    return tuple(TABLE_HEADERS.get(c, c) for c in columns) if out_format == "table" else columns


def _projected(records, columns, out_format: str):
    """Records holding only ``columns``; ``first_message`` (``Store.listing``'s, as stored) on one
    line in tables and text, as stored in JSON and CSV."""
    from symfonic_cli.render.writers import is_data  # here: --help loads no renderer

    one_line = "first_message" in columns and not is_data(out_format)
    for rec in records:
        if one_line and rec.get("first_message") is not None:
            rec["first_message"] = " ".join(rec["first_message"].split())
        yield {c: rec.get(c) for c in columns}
