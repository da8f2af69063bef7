"""docs/guide/mcp.md's client configuration, started exactly as written: the JSON block read from the
page, the one path it names (``/home/you/support``) made the folder holding the demo store, its
``command`` found on the PATH the client starts programs with, through the SDK's stdio client as a
host starts it (its own working directory, the environment the SDK passes on). The handshake names
the server's real version; ``list_threads`` takes the CLI's comma form of ``status``."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide" / "mcp.md"
# The path the guide tells the reader to change, and nothing else.
NAMED_FOLDER = "/home/you/support"


def _client_block() -> dict[str, Any]:
    blocks = [b for b in re.findall(r"```json\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S) if "mcpServers" in b]
    assert len(blocks) == 1, blocks
    return json.loads(blocks[0])


async def _session(params: Any, errlog: Any) -> tuple[Any, list[Any]]:
    from mcp import Client
    from mcp.client.stdio import stdio_client

    async with Client(stdio_client(params, errlog=errlog)) as client:
        calls = [await client.call_tool("list_threads", {"status": "interrupted,error"}),
                 await client.call_tool("list_threads", {"status": ["interrupted"]}),
                 await client.call_tool("list_threads", {"status": "interrupted,stuck"})]
        return client.server_info, calls


def test_the_guides_json_block_starts_as_written(tmp_path, monkeypatch, demo_master):
    import anyio
    from mcp.client.stdio import StdioServerParameters

    import symfonic_cli

    folder = tmp_path / "support"
    folder.mkdir()
    shutil.copyfile(demo_master, folder / "demo.db")  # what `symfonic demo` writes there
    entry = _client_block()["mcpServers"]["support-store"]
    assert set(entry) <= {"command", "args", "env"}
    written = json.loads(json.dumps(entry).replace(NAMED_FOLDER, str(folder)))
    # The host's environment: a PATH holding the installed command (the venv's bin), its own HOME
    # (the access log's default place) and its own working directory, not the reader's.
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    elsewhere = tmp_path / "host-cwd"
    elsewhere.mkdir()
    params = StdioServerParameters(command=written["command"], args=written["args"], env=written.get("env"), cwd=str(elsewhere))
    with open(tmp_path / "server-stderr.txt", "w") as errlog:
        info, (both, listed_form, wrong) = anyio.run(_session, params, errlog)
    stderr = (tmp_path / "server-stderr.txt").read_text()
    assert "Traceback" not in stderr, stderr

    assert info.name == "symfonic" and info.version == symfonic_cli.__version__
    assert not both.is_error, both.content
    rows = {(r["key"], r["status"]) for r in both.structured_content["result"]}
    assert rows == {("acme:eu:s-003", "interrupted")}  # acme's threads only: the error thread is globex's
    assert not listed_form.is_error and listed_form.structured_content == both.structured_content
    # A wrong word in the comma form: one line naming it, no validation dump, no URL.
    assert wrong.is_error and len(wrong.content) == 1
    text = wrong.content[0].text
    assert text.count("\n") == 0 and "stuck" in text and "http" not in text, text
