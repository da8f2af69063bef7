"""A store whose latest checkpoint holds a value naming ``os.system`` (an ormsgpack extension a
naive decoder would import and call): the transcript and history tests prove nothing runs it."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

THREAD = "globex:_:s-101"


def store_with_payload(tmp_path: Path, sqlite_master: Path, *, in_messages: bool) -> tuple[Path, Path]:
    """(a copy of the scenario store with the payload in ``THREAD``'s latest root checkpoint, the
    file the payload would create if run). ``in_messages``: appended to the messages, else a
    channel of its own."""
    import ormsgpack

    marker = tmp_path / "pwned"
    path = tmp_path / "hostile.db"
    shutil.copyfile(sqlite_master, path)
    conn = sqlite3.connect(path)
    cid, blob = conn.execute(
        "SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
        "ORDER BY checkpoint_id DESC LIMIT 1", (THREAD,)
    ).fetchone()
    keep = lambda code, data: ormsgpack.Ext(code, data)  # noqa: E731 - re-pack stored objects untouched
    value = ormsgpack.unpackb(blob, ext_hook=keep, option=ormsgpack.OPT_NON_STR_KEYS)
    evil = ormsgpack.Ext(0, ormsgpack.packb(["os", "system", f"touch {marker}"]))
    if in_messages:
        value["channel_values"]["messages"].append(evil)
    else:
        value["channel_values"]["evil"] = evil
    conn.execute("UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?", (ormsgpack.packb(value, option=ormsgpack.OPT_NON_STR_KEYS), cid))
    conn.commit()
    conn.close()
    return path, marker
