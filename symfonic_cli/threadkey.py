"""Thread keys as symfonic-core derives them: ``tenant:sub:session``, ``_`` for no sub-tenant."""

from __future__ import annotations

from collections import namedtuple

NO_SUB_TENANT = "_"


def derive_key(tenant: str, sub_tenant: str | None, session: str) -> str:
    # Same formula as SymfonicAgent._thread_id_for: an empty sub-tenant also becomes "_".
    return f"{tenant}:{sub_tenant or NO_SUB_TENANT}:{session}"


# tenant, sub_tenant (None when the key says "_"), session
KeyParts = namedtuple("KeyParts", "tenant sub_tenant session")


def parse_key(key: str) -> KeyParts | None:
    """Split a three-part key; None when the key does not have that form.

    The session is everything after the second colon, so a session id may itself hold colons.
    """
    parts = key.split(":", 2)
    if len(parts) != 3 or not parts[0] or not parts[2]:
        return None
    tenant, sub, session = parts
    return KeyParts(tenant, None if sub == NO_SUB_TENANT else sub, session)


def tenant_prefix(tenant: str, sub_tenant: str | None = None) -> str:
    """The key prefix shared by every thread of a tenant (or of one sub-tenant)."""
    if sub_tenant is None:
        return f"{tenant}:"
    return f"{tenant}:{sub_tenant or NO_SUB_TENANT}:"


def prefix_upper_bound(prefix: str) -> str | None:
    """The least string above every string that starts with ``prefix``, in code point order (the
    byte order of UTF-8), or None when no string is above them all (empty prefix, or U+10FFFF
    only). ``[prefix, bound)`` is then exactly the strings starting with ``prefix``. Surrogates are
    skipped: U+D7FF is followed by U+E000 (a surrogate cannot be encoded, nor stored).
    """
    chars = list(prefix)
    while chars:
        code = ord(chars.pop()) + 1
        if code > 0x10FFFF:
            continue  # nothing above U+10FFFF at this position: carry into the one before
        if 0xD800 <= code <= 0xDFFF:
            code = 0xE000
        return "".join(chars) + chr(code)
    return None
