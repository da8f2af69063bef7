"""``symfonic mcp``: a read-only MCP server over the Python API (docs/guide/mcp.md).

A front end beside ``cli/`` and on ``api/``: ``scope.py`` (which threads a session may see, decided
in the store's queries), ``answer.py`` (caps, escaping, the untrusted-data text block),
``accesslog.py`` (one JSONL record per tool call), ``tools.py`` (the tools, free of the SDK) and
``server.py`` (the SDK's ``MCPServer``, stdio or streamable HTTP on loopback). The SDK is the
``symfonic[mcp]`` extra, imported only when the server starts.
"""
