"""SecantusDB for the suite: stopping one without its wait, and serving one in a process of its own
(``python -m tests.support.secantus_server STORAGE_PATH``: prints its URI, serves until its stdin
closes). Imports nothing of the suite, so the server's process starts with SecantusDB alone."""

from __future__ import annotations

import socket
import sys


def stop_server(server) -> None:
    """Stop a SecantusDB server without its 2 s wait: its accept loop does not wake when the
    listening socket is closed (Linux), so shut the socket down first and it returns."""
    listening = getattr(server, "_socket", None)
    if listening is not None:
        try:
            listening.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    server.stop()


def serve(storage_path: str) -> None:
    from secantus import SecantusDBServer

    server = SecantusDBServer(host="127.0.0.1", port=0, storage_path=storage_path)
    server.start()
    print(server.uri, flush=True)
    sys.stdin.read()  # until the suite closes the pipe, or ends
    stop_server(server)


if __name__ == "__main__":
    serve(sys.argv[1])
