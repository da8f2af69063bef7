"""The root options, one table: what each is called, whether it takes a value, its environment
variable and its help. The typer root (``root.py``), the copies every command gets
(``rootopts.py``), the argv readers that find the command name (``app.py``) and the quick route
(``fast.py``), and TAB completion (``complete.py``) all read it; ``tests/cli/test_root_options.py``
checks the click tree against it. Imports only the vocabulary (a TAB and the quick route load it).
"""

from __future__ import annotations

from symfonic_cli.vocabulary import COLOR_MODES, one_of

DEBUG_ENV = "SYMFONIC_DEBUG"
CONNECT_TIMEOUT_ENV = "SYMFONIC_CONNECT_TIMEOUT"
# --aes-key-file from the environment (codec/cipher.py: KEY_FILE_ENV).
AES_KEY_FILE_ENV = "SYMFONIC_AES_KEY_FILE"
TZ_ENV = "SYMFONIC_TZ"

# name -> opts; kind "flag" (no value) or "value"; env: its environment variable; store: about
# reaching a store (not given to the commands that open none); root_only: never after a command.
ROOT_OPTIONS: dict[str, dict] = {
    "debug": {"opts": ("--debug",), "kind": "flag", "env": DEBUG_ENV, "help": "Show tracebacks for errors."},
    "version": {
        "opts": ("--version", "-V"), "kind": "flag", "root_only": True,
        "help": "Print the version of symfonic and of the LangGraph packages it runs with.",
    },
    "connect_timeout": {
        "opts": ("--connect-timeout",), "kind": "value", "env": CONNECT_TIMEOUT_ENV, "store": True,
        "help": "Seconds to wait for a database server (0.1 to 3600).",
    },
    "pg_schema": {
        "opts": ("--pg-schema",), "kind": "value", "env": "SYMFONIC_PG_SCHEMA", "store": True,
        "help": "PostgreSQL schema holding the checkpoint tables.",
    },
    "checkpoint_collection": {
        "opts": ("--checkpoint-collection",), "kind": "value", "env": "SYMFONIC_CHECKPOINT_COLLECTION", "store": True,
        "help": "MongoDB checkpoints collection.",
    },
    "writes_collection": {
        "opts": ("--writes-collection",), "kind": "value", "env": "SYMFONIC_WRITES_COLLECTION", "store": True,
        "help": "MongoDB pending-writes collection.",
    },
    "color": {
        "opts": ("--color",), "kind": "value",
        "help": f"Styles in tables: {COLOR_MODES[0]} (on a terminal, unless NO_COLOR is set or TERM=dumb), {one_of(COLOR_MODES[1:])}.",
    },
    "no_pager": {"opts": ("--no-pager",), "kind": "flag", "help": "Print straight to the terminal, however tall the output."},
    "aes_key_file": {
        "opts": ("--aes-key-file",), "kind": "value", "env": AES_KEY_FILE_ENV,
        "help": "A file holding the raw AES key of a store written with LangGraph's EncryptedSerializer "
        "(else LANGGRAPH_AES_KEY is used). It must not be readable by group or others.",
    },
    "absolute_time": {
        "opts": ("--absolute-time",), "kind": "flag",
        "help": "Tables show times as ISO 8601 instants (in --tz), not as ages (45s, 3h, 12d). Text and JSON always do.",
    },
    "tz": {
        "opts": ("--tz",), "kind": "value", "env": TZ_ENV,
        "help": "Time zone of the times shown in table and text output and of times typed without an offset "
        "(--since, --until, --inactive-since): UTC (default), +02:00 or an IANA name such as Europe/Berlin. "
        "JSON and JSONL stay UTC.",
    },
}
# typer's completion options, hidden on the root: they point to ``symfonic completion`` (root.py).
TYPER_ROOT_ONLY = ("--install-completion", "--show-completion")

# Spellings of the root options that take a value (an argv reader skips the value).
VALUE_OPTIONS = frozenset(o for spec in ROOT_OPTIONS.values() if spec["kind"] == "value" for o in spec["opts"])
# Spellings offered only before a command.
ROOT_ONLY = tuple(o for spec in ROOT_OPTIONS.values() if spec.get("root_only") for o in spec["opts"]) + TYPER_ROOT_ONLY
# The options about reaching a store, by name; the connection ones of them by spelling (what a
# store opened for TAB takes from the command line).
STORE_ONLY = frozenset(name for name, spec in ROOT_OPTIONS.items() if spec.get("store"))
CONNECTION = {o: name for name, spec in ROOT_OPTIONS.items() if spec.get("store") and name != "connect_timeout" for o in spec["opts"]}
# The connection options' environment variables, by name.
ROOT_ENV = {name: ROOT_OPTIONS[name]["env"] for name in CONNECTION.values()}


def opts(name: str) -> tuple[str, ...]:
    return ROOT_OPTIONS[name]["opts"]


def help_of(name: str) -> str:
    return ROOT_OPTIONS[name]["help"]
