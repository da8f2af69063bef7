"""How a database server's URL is written (PostgreSQL, MongoDB): ``scheme://[user[:password]@]host...``."""

from __future__ import annotations

from collections.abc import Callable

from symfonic_cli.errors import UsageError


def url_path(raw: str, scheme: str, mask: Callable[[str], str]) -> None:
    """Checks a server URL; it names no file."""
    authority = raw[len(scheme) + 3:].split("/", 1)[0]
    if authority.count("@") > 1:
        # libpq would take the first "@", pymongo the last: the driver would not read what was meant.
        raise UsageError(
            f"the store URL {mask(raw)} has more than one '@' before its host",
            hint="percent-encode '@' in a user name or password as %40, or keep the password out of the URL",
        )
    return None
