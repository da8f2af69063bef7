"""Where a store is: parsing ``--store`` / ``SYMFONIC_STORE`` and masking secrets for display."""

from __future__ import annotations

import os
import re
from collections import namedtuple

from symfonic_cli.errors import StoreError, UsageError
from symfonic_cli.kinds import KINDS, PATH_KIND, SCHEMES, bare_kind  # each kind's grammar: kinds/

STORE_ENV = "SYMFONIC_STORE"
CONFIG_ENV = "SYMFONIC_CONFIG"

_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")


def url_scheme(raw: str) -> str | None:
    """The scheme of ``scheme://...`` (RFC 3986 characters), or None for a plain path."""
    end = raw.find("://")
    if end < 1 or not raw[0].isascii() or not raw[0].isalpha():
        return None
    scheme = raw[:end]
    return scheme if all(c in _SCHEME_CHARS for c in scheme) else None


class StoreLocation(namedtuple("_Location", "kind url path name options")):
    """Where a store is. A plain tuple (no dataclass, no typing, no pathlib): quick commands
    import this module, and each of those costs start-up time.

    - ``kind``: a key of kinds.KINDS
    - ``url``: as given; may hold a password, so print ``display``, never ``url``
    - ``path``: a file store's file (user-expanded str); None for a server
    - ``name``: the config-file name it was given by, if any
    - ``options``: that config entry's other settings (each location its own dict)
    """

    __slots__ = ()

    @property
    def display(self) -> str:
        return mask_url(self.url)


# A setting whose name holds one of these words is a secret, wherever it is: a libpq keyword
# (password, sslpassword: the sslkey's passphrase), a URL option (tlsCertificateKeyFilePassword),
# a MongoDB authMechanismProperties entry (AWS_SESSION_TOKEN), a server setting in libpq's
# options ("-c password=..."). Its value is shown as ***.
_SECRET_WORDS = ("password", "passwd", "passphrase", "secret", "token", "credential", "apikey", "api_key")
# name, then = or :, then the value (quoted as libpq quotes, or up to a separator).
_SECRET_PAIR = (
    r"(?i)([\w.\-]*(?:" + "|".join(_SECRET_WORDS) + r")[\w.\-]*)(\s*[=:]\s*)('(?:[^'\\]|\\.)*'?|[^\s,&;']*)"
)


def is_secret_name(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_WORDS)


def _has_secret_word(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in _SECRET_WORDS)


def _mask_pairs(text: str, found: set[str]) -> str:
    """``text`` with the value of every secret ``name=value`` or ``name:value`` in it as ***."""
    if not _has_secret_word(text):
        return text

    def hide(m: re.Match) -> str:
        value = m.group(3)
        if not value:
            return m.group(0)
        found.add(value)
        if value.startswith("'"):
            found.add(re.sub(r"\\(.)", r"\1", value.strip("'")))
        return m.group(1) + m.group(2) + "***"

    return re.sub(_SECRET_PAIR, hide, text)


def _mask_key_values(raw: str, found: set[str]) -> str | None:
    """A key/value location (a libpq string) with each secret value as ***, or None when no kind
    reads ``raw`` as key/value pairs."""
    kind = bare_kind(raw)
    pairs = kind.pairs(raw) if kind is not None and kind.pairs is not None else None
    if pairs is None:
        return None
    out, last = [], 0
    for key, value, start, end in pairs:
        if is_secret_name(key):
            shown = "***"
            found.update((value, raw[start:end]))
        elif _has_secret_word(value):  # options='-c password=...': the secret inside the value
            inner = _mask_pairs(value, found)
            if inner == value:
                continue
            shown = "'" + inner.replace("\\", "\\\\").replace("'", "\\'") + "'"
        else:
            continue
        out.append(raw[last:start] + shown)
        last = end
    return "".join(out) + raw[last:]


def _mask_query(query: str, found: set[str]) -> str:
    """A URL's query with every secret option's value, and every secret inside a value, as ***."""
    from urllib.parse import quote, unquote

    parts = re.split(r"([&;])", query)
    for i in range(0, len(parts), 2):
        name, eq, value = parts[i].partition("=")
        if not eq:
            continue
        decoded = unquote(value)
        if is_secret_name(unquote(name)):
            found.update((value, decoded))
            parts[i] = name + "=***"
        elif _has_secret_word(decoded):
            inner = _mask_pairs(decoded, found)
            if inner != decoded:
                parts[i] = name + "=" + quote(inner, safe=":,*")
    return "".join(parts)


def _userinfo_ends(rest: str) -> list[int]:
    """Where the userinfo of ``rest`` (what follows ``scheme://``) may end: each "@" a parser
    could take. pymongo and RFC 3986 take the last "@" before the first "/"; libpq takes the
    first "@" and keeps "?" and "#" inside a password. Masking every reading can only hide more.
    """
    ends = []
    slash = rest.find("/")
    authority = rest if slash == -1 else rest[:slash]
    if "@" in authority:
        ends.append(authority.rfind("@"))
        ends.append(authority.find("@"))  # the same unless parse_location refuses the URL
    elif "@" in rest:
        ends.append(rest.find("@"))  # a "/" in the password, read as libpq reads it
    return [e for e in set(ends) if ":" in rest[:e]]


def masked(url: str) -> tuple[str, list[str]]:
    """The one masking rule: ``url`` (a URL, a libpq key/value string or a path) with every secret
    as ``***``, and the secrets it hid (longest first, to remove them from driver messages)."""
    found: set[str] = set()
    scheme = url_scheme(url)
    if scheme is not None:
        prefix = url[: len(scheme) + 3]
        rest = url[len(prefix):]
        ends = _userinfo_ends(rest)
        if ends:
            found.update(rest[rest.index(":") + 1 : end] for end in ends)
            rest = rest[: rest.index(":") + 1] + "***" + rest[max(ends):]
        if _has_secret_word(rest):
            # The query (libpq also reads "?" inside a password: masked above), else the whole tail.
            head, q, query = rest.partition("?")
            rest = head + q + _mask_query(query, found) if q else _mask_pairs(rest, found)
        shown = prefix + rest
    elif not _has_secret_word(url):  # a file path: no regex to compile
        return url, []
    else:
        pairs = _mask_key_values(url, found)
        # Not parseable: every secret name=value (a quoted value to its end) hidden.
        shown = pairs if pairs is not None else _mask_pairs(url, found)
    return shown, sorted((s for s in found if s and s != "***"), key=len, reverse=True)


def mask_url(url: str) -> str:
    """``url`` with every secret in it as ``***`` (see ``masked``)."""
    return masked(url)[0]


def scrub(text: str, location: StoreLocation | None) -> str:
    """Remove a location's secrets from any text (driver error messages echo DSNs)."""
    if location is None:
        return text
    shown, secrets = masked(location.url)
    text = text.replace(location.url, shown)
    if secrets:
        from urllib.parse import quote, unquote

        for secret in secrets:
            for form in {secret, unquote(secret), quote(secret, safe="")}:
                if len(form) > 0:
                    text = text.replace(form, "***")
    return text


def config_path() -> str:
    env = os.environ.get(CONFIG_ENV)
    if env:
        return os.path.expanduser(env)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "symfonic", "config.toml")


def load_config() -> dict:
    """The user's config file, or {} when there is none."""
    path = config_path()
    explicit = bool(os.environ.get(CONFIG_ENV))
    try:
        present = os.path.isfile(path)
    except OSError as exc:
        # Someone else's home (sudo, service users): only an explicitly named file must be readable.
        if explicit:
            raise UsageError(f"cannot read config file {path}: {exc.strerror}") from None
        return {}
    if not present:
        if explicit:
            raise UsageError(f"config file {path} (from ${CONFIG_ENV}) does not exist")
        return {}
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read config file {path}: {exc}") from None


def resolve_store(value: str | None) -> StoreLocation:
    """Turn ``--store`` (or ``SYMFONIC_STORE``) into a location.

    Accepts a URL, a plain file path (SQLite), or the name of a store in the config file.
    """
    raw = value if value else os.environ.get(STORE_ENV)
    if not raw:
        raise UsageError(
            "no store given", hint=f"pass --store URL or set {STORE_ENV}"
        )
    config = load_config()
    stores = config.get("stores", {}) if isinstance(config, dict) else {}
    if url_scheme(raw) is None and raw in stores:
        entry = stores[raw]
        if isinstance(entry, str):
            entry = {"url": entry}
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
            raise UsageError(f"config store '{raw}' has no url")
        loc = parse_location(entry["url"])
        options = {k: v for k, v in entry.items() if k != "url"}
        return StoreLocation(loc.kind, loc.url, loc.path, raw, options)
    _check_store_name(raw, stores)
    return parse_location(raw)


def _check_store_name(raw: str, stores) -> None:
    """A word that names no file and no configured store was meant as a store name: say which
    names there are, nearest first, rather than "no SQLite file at dem"."""
    if url_scheme(raw) is not None or bare_kind(raw) is not None:
        return
    if any(c in raw for c in "/\\.") or os.path.lexists(os.path.expanduser(raw)):
        return
    if not isinstance(stores, dict) or not stores:
        # The guides use names such as prod: say where a name comes from (exit 4, as a missing file).
        where = "names no stores" if os.path.exists(config_path()) else "does not exist"
        raise StoreError(f"no SQLite file at {raw}, and no store named '{raw}' ({config_path()} {where})",
                         hint="store names come from the config file's [stores] table: docs/reference/configuration.md")
    import difflib

    names = sorted(k for k in stores if isinstance(k, str))
    near = difflib.get_close_matches(raw, names, n=1, cutoff=0.6)
    head = f"no store named '{raw}' in {config_path()}"
    if near:
        head += f"; did you mean '{near[0]}'?"
    raise UsageError(head, hint="configured stores: " + ", ".join(names) + " (symfonic store list)")


def configured_stores() -> list[tuple[str, str, str]]:
    """(name, kind, masked URL) of every store in the config file, by name."""
    config = load_config()
    stores = config.get("stores", {}) if isinstance(config, dict) else {}
    out = []
    for name in sorted(k for k in stores if isinstance(k, str)) if isinstance(stores, dict) else ():
        entry = stores[name]
        url = entry if isinstance(entry, str) else entry.get("url") if isinstance(entry, dict) else None
        if not isinstance(url, str):
            out.append((name, "-", "(no url)"))
            continue
        try:
            kind = parse_location(url).kind
        except (UsageError, StoreError):
            kind = "?"
        out.append((name, kind, mask_url(url)))
    return out


def parse_location(raw: str) -> StoreLocation:
    """A location as written: a URL of a kind's scheme, a kind's own scheme-less form (a libpq
    key/value string is PostgreSQL, never a file), else a file path; each kind's grammar checks its
    form and gives the file it names (kinds/)."""
    scheme = url_scheme(raw)
    if scheme is None:
        kind = bare_kind(raw) or KINDS[PATH_KIND]
        return StoreLocation(kind.name, raw, kind.bare_path(raw, mask_url), None, {})
    scheme = scheme.lower()
    name = SCHEMES.get(scheme)
    if name is None:
        raise StoreError(
            f"unsupported store scheme '{scheme}://' in {mask_url(raw)}",
            hint="use sqlite:///FILE, postgresql://... or mongodb://...",
        )
    return StoreLocation(name, raw, KINDS[name].url_path(raw, scheme, mask_url), None, {})
