"""The options of ``threads list``, ``threads search``, ``store info`` and ``compat report`` (and ``--store``/``--format`` everywhere), as
plain data: the typer commands build their options from these (``options.typer_option``), and the
quick route (``fast.py``) its parser, so the two routes cannot drift apart.

Each option: ``opts`` (its spellings), ``help``, and optionally ``kind`` (``text``, the default:
one string; ``count``: an integer from 0 to MAX_COUNT; ``multi``: a string, repeatable; ``flag``:
no value, False unless given; ``argument``: the command's positional argument, no ``opts``) and ``env`` (the environment variable read when it is not given).
The words an option takes are vocabulary.OPTION_WORDS' (``[a|b|c]`` in --help, offered on TAB).

Free of typer, typing and dataclasses: the quick route loads it.
"""

from __future__ import annotations

from symfonic_cli.cli.columns import COLUMN_NAMES
from symfonic_cli.cli.common import MAX_COUNT
from symfonic_cli.location import STORE_ENV
from symfonic_cli.vocabulary import (
    DEFAULT_SORT,
    ENVELOPE_KEY_ENV,
    FINDINGS,
    FORMATS,
    RECORD_FORMATS,
    SORTS,
    STATUSES,
    listed,
    one_of,
)

# typing.TYPE_CHECKING without importing typing (the quick route loads this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STORE = {
    "opts": ("--store", "-s"),
    "env": STORE_ENV,
    "help": "Store URL (sqlite:///file.db, postgresql://..., mongodb://...), a file path, or a name from the config file.",
}
FORMAT = {
    "opts": ("--format", "-f"),
    "help": f"{one_of(FORMATS)} (default: table on a terminal, text otherwise).",
}
# The commands that print records (vocabulary.RECORD_COMMANDS) also write CSV.
RECORD_FORMAT = {
    "opts": ("--format", "-f"),
    "help": f"{one_of(RECORD_FORMATS)} (default: table on a terminal, text otherwise).",
}
# The filters threads list and threads search share.
TENANT = {"opts": ("--tenant",), "help": "Only this tenant's threads."}
SUB_TENANT = {"opts": ("--sub-tenant",), "help": "Only this sub-tenant's threads (with --tenant; '_' for none)."}
SESSION = {"opts": ("--session",), "help": "Only threads of this session id, any tenant."}
INACTIVE_FOR = {"opts": ("--inactive-for",), "help": "Only threads whose last activity is older than this (90d, 12h, 2w)."}
INACTIVE_SINCE = {
    "opts": ("--inactive-since",),
    "help": "Only threads with no activity since this ISO 8601 date or time (no offset means --tz, default UTC).",
}
ACTIVE_WITHIN = {"opts": ("--active-within",), "help": "Only threads active within this time (7d, 12h)."}

THREADS_LIST = {
    "store": STORE,
    "tenant": TENANT,
    "sub_tenant": SUB_TENANT,
    "limit": {"opts": ("--limit", "-n"), "kind": "count", "help": f"At most N threads (0 to {MAX_COUNT})."},
    "fmt": RECORD_FORMAT,
    "status": {
        "opts": ("--status",), "kind": "multi",
        "help": f"Only threads in this run state: {listed(STATUSES)} (repeatable, or a comma list).",
    },
    "session": SESSION,
    "sort": {
        "opts": ("--sort",),
        "help": f"{DEFAULT_SORT} (default), {one_of(SORTS[1:])}; newest or largest first.",
    },
    "reverse": {"opts": ("--reverse",), "kind": "flag", "help": "Reverse the order."},
    "with_size": {"opts": ("--with-size",), "kind": "flag", "help": "Add size_bytes: the thread's stored checkpoints, blobs and writes."},
    "inactive_for": INACTIVE_FOR,
    "inactive_since": INACTIVE_SINCE,
    "active_within": ACTIVE_WITHIN,
    "since": {
        "opts": ("--since",),
        "help": "Only threads last active at or after this time (2h ago, a date, an ISO 8601 time; as transcript show).",
    },
    "until": {"opts": ("--until",), "help": "Only threads last active at or before this time (a date keeps that whole day)."},
    "wide": {"opts": ("--wide", "-w"), "kind": "flag", "help": "Every column (as kubectl -o wide): tenant, sub-tenant, session, first activity, size, the first message."},
    "columns": {
        "opts": ("--columns",),
        "help": f"Columns (JSON: fields) to show, in this order: {listed(COLUMN_NAMES)} (or first: the first user message).",
    },
}
STORE_INFO = {"store": STORE, "fmt": FORMAT}
THREADS_SEARCH: dict[str, dict[str, Any]] = {
    # kind "argument": the one positional argument (the quick route takes it once, not dash-leading).
    "text": {"kind": "argument", "help": "The text to find, case-insensitive by Unicode case folding (straße finds STRASSE)."},
    "store": STORE,
    "case_sensitive": {"opts": ("--case-sensitive",), "kind": "flag", "help": "Match the text exactly, case included."},
    "tools": {"opts": ("--tools",), "kind": "flag", "help": "Also search tool calls (name, call id, arguments) and which tool answered."},
    "tenant": TENANT,
    "sub_tenant": SUB_TENANT,
    "session": SESSION,
    "inactive_for": INACTIVE_FOR,
    "inactive_since": INACTIVE_SINCE,
    "active_within": ACTIVE_WITHIN,
    "limit": {"opts": ("--limit", "-n"), "kind": "count", "help": f"At most N threads, newest activity first (0 to {MAX_COUNT})."},
    "fmt": RECORD_FORMAT,
}

COMPAT_REPORT = {
    "store": STORE,
    "by_thread": {"opts": ("--by-thread",), "kind": "flag",
                  "help": "One report per thread, for every thread: all the threads of a finding (the store-wide report names the first 10)."},
    "grace": {"opts": ("--grace",), "help": "Unfinalized writes younger than this are 'in flight', older ones 'interrupted by a crash' (default 15m, as thread erase; e.g. 90s, 2h)."},
    "envelope_key": {"opts": ("--envelope-key",), "env": ENVELOPE_KEY_ENV, "help": "Metadata key holding the envelope."},
    "fmt": FORMAT,
    "fail_on": {"opts": ("--fail-on",), "help": f"Exit 5 when any of these findings is present: {','.join(FINDINGS)} ('' for never)."},
}

# The commands the quick route takes, and their options.
QUICK: dict[tuple[str, str], dict[str, dict[str, Any]]] = {
    ("threads", "list"): THREADS_LIST, ("store", "info"): STORE_INFO, ("threads", "search"): THREADS_SEARCH,
    ("compat", "report"): COMPAT_REPORT,
}
# Options of those commands that only typer handles (a list, an integer range of its own, the
# KEY argument's alternatives): a command line using one goes through typer. Spelling -> parameter.
TYPER_ONLY: dict[tuple[str, str], dict[str, str]] = {
    ("compat", "report"): {"--thread": "thread", "-t": "thread", "--tenant": "tenant", "--sub-tenant": "sub_tenant",
                           "--session": "session", "--current-format": "current_format"},
}
