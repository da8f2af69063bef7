"""How a PostgreSQL location is written without a URL: libpq's key/value string
(``host=h dbname=x user=u``), handed to libpq as it is. The reader here reads it as libpq does; the
masking of secrets (location.py) reads it through ``pairs`` too."""

from __future__ import annotations

import re
from collections.abc import Callable

from symfonic_cli.errors import UsageError

# libpq's connection keywords (PostgreSQL 17): a "key=value ..." string made of these is a
# PostgreSQL location, handed to libpq as it is.
LIBPQ_KEYWORDS = frozenset(
    "host hostaddr port dbname user password passfile require_auth channel_binding connect_timeout "
    "client_encoding options application_name fallback_application_name keepalives keepalives_idle "
    "keepalives_interval keepalives_count tcp_user_timeout replication gssencmode sslmode sslnegotiation "
    "requiressl sslcompression sslcert sslkey sslpassword sslcertmode sslrootcert sslcrl sslcrldir sslsni "
    "requirepeer ssl_min_protocol_version ssl_max_protocol_version krbsrvname gsslib gssdelegation "
    "service target_session_attrs load_balance_hosts".split()
)
_CONNINFO_START = re.compile(r"\s*[A-Za-z_]+\s*=")


def claims(raw: str) -> bool:
    """Whether a location without a scheme is written as a key/value string (never a file)."""
    return _CONNINFO_START.match(raw) is not None


def pairs(raw: str) -> list[tuple[str, str, int, int]] | None:
    """A libpq key/value string read as libpq reads it: (keyword, value, start, end of the value
    as written), or None when it does not parse (an unterminated quote, a keyword without "=")."""
    found: list[tuple[str, str, int, int]] = []
    i, n = 0, len(raw)
    while True:
        while i < n and raw[i].isspace():
            i += 1
        if i >= n:
            return found
        start = i
        while i < n and raw[i] != "=" and not raw[i].isspace():
            i += 1
        key = raw[start:i]
        while i < n and raw[i].isspace():
            i += 1
        if not key or i >= n or raw[i] != "=":
            return None
        i += 1
        while i < n and raw[i].isspace():
            i += 1
        vstart, value = i, []
        if i < n and raw[i] == "'":
            i += 1
            while True:
                if i >= n:
                    return None
                c = raw[i]
                if c == "\\" and i + 1 < n:
                    value.append(raw[i + 1])
                    i += 2
                elif c == "'":
                    i += 1
                    break
                else:
                    value.append(c)
                    i += 1
        else:
            while i < n and not raw[i].isspace():
                if raw[i] == "\\" and i + 1 < n:
                    i += 1
                value.append(raw[i])
                i += 1
        found.append((key, "".join(value), vstart, i))


def bare_path(raw: str, mask: Callable[[str], str]) -> None:
    """Checks a key/value string (every keyword libpq's); a server location has no file."""
    found = pairs(raw)
    hint = "a PostgreSQL key/value string takes libpq's keywords (host=... dbname=... user=...); name a file whose name holds '=' as ./NAME or sqlite:///NAME"
    if found is None:
        raise UsageError(f"malformed key/value connection string {mask(raw)}", hint=hint)
    unknown = [k for k, *_ in found if k not in LIBPQ_KEYWORDS]
    if unknown:
        raise UsageError(f"unknown connection keyword '{unknown[0]}' in {mask(raw)}", hint=hint)
    return None
