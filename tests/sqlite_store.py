"""Building SQLite stores with the real SqliteSaver."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.scenarios import write_scenarios


def build_sqlite_store(path: Path, only=None):
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(path), check_same_thread=False)
    try:
        return write_scenarios(SqliteSaver(conn), only)
    finally:
        conn.close()
