"""Shell completion without typer or a database driver: a TAB answers in tens of milliseconds.

The shells call ``symfonic`` with ``_SYMFONIC_COMPLETE`` set (the protocol of the scripts in
``completions/``, also typer's). The command tree (commands, options, which take a value, their
choices) is read from a cache built from the typer app the first time, and again whenever the
CLI modules change; ``symfonic completion install`` builds it. Store names come from the config.
"""

from __future__ import annotations

import json
import os
import sys

# ROOT_ONLY: offered before a command, never after one; CONNECTION: the connection options read
# from the command line for the key look-up (rootspec.py, the one table of root options).
from symfonic_cli.cli.rootspec import CONNECTION as _CONNECTION, ROOT_ONLY
from symfonic_cli.vocabulary import option_words  # the values completed for --format, --status, ...

STORE_OPTIONS = ("--store", "-s", "--to", "--from")
# Options whose value is a thread key: completed from the store named on the command line.
KEY_OPTIONS = ("--thread", "-t")
# Arguments whose first word is a thread key (KeyArg; thread diff's refs: [KEY] A B).
KEY_ARGUMENTS = ("key", "refs")
# Options that name the thread otherwise: with one of them the first argument is not a key.
_THREAD_GIVEN = ("--thread", "-t", "--tenant", "--session", "--all", "--from-file", "--all-sessions")
MAX_KEYS = 100
# A TAB must answer quickly: a server that does not is given up on.
_TAB_CONNECT_TIMEOUT = 2.0


def _cli_dir() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "cli")


def _stamp() -> str:
    """Changes whenever a CLI module (or this one, or the vocabulary) changes: the cache is rebuilt."""
    from symfonic_cli import __version__

    here = _cli_dir()
    parts = [__version__]
    for name in sorted(os.listdir(here)):
        if name.endswith(".py"):
            st = os.stat(os.path.join(here, name))
            parts.append(f"{name}:{st.st_mtime_ns}:{st.st_size}")
    st = os.stat(os.path.abspath(__file__))
    parts.append(f"complete:{st.st_mtime_ns}")
    st = os.stat(os.path.join(os.path.dirname(os.path.abspath(__file__)), "vocabulary.py"))
    parts.append(f"vocabulary:{st.st_mtime_ns}:{st.st_size}")
    return "|".join(parts)


def cache_path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "symfonic", "completion.json")


def build_tree() -> dict:
    """The command tree from the typer app (slow: imports typer and click)."""
    import click
    from typer.main import get_command

    from symfonic_cli.cli.root import build_app
    from symfonic_cli.cli.rootopts import everywhere

    root = get_command(build_app(None))
    everywhere(root)

    def node(cmd: click.Command, path: tuple[str, ...] = ()) -> dict:
        options = {}
        for p in cmd.params:
            if not isinstance(p, click.Option) or p.hidden:
                continue
            takes = not p.is_flag and not p.count
            words = next((w for w in (option_words(path, o) for o in p.opts) if w), ())
            choices = list(words or getattr(p.type, "choices", ()) or ())
            meta = p.metavar or ""
            if not choices and meta.startswith("[") and meta.endswith("]") and "|" in meta:
                choices = meta[1:-1].split("|")
            for opt in (*p.opts, *p.secondary_opts):
                options[opt] = {"value": takes, "choices": choices,
                                "store": opt in STORE_OPTIONS, "key": opt in KEY_OPTIONS,
                                "zone": opt == "--tz"}
        out: dict = {"options": options}
        # A command of one thread takes the key as its first argument (cli/options.py KeyArg; thread
        # diff's [KEY] A B): TAB completes it from the store as it does --thread's value.
        if any(isinstance(p, click.Argument) and p.name in KEY_ARGUMENTS for p in cmd.params):
            out["key_argument"] = True
        if isinstance(cmd, click.Group):
            out["commands"] = {name: node(sub, (*path, name)) for name, sub in cmd.commands.items() if not sub.hidden}
        return out

    return node(root)


def load_tree(*, rebuild: bool = False) -> dict:
    path = cache_path()
    stamp = _stamp()
    if not rebuild:
        try:
            with open(path, encoding="utf-8") as fh:
                cached = json.load(fh)
            if cached.get("stamp") == stamp:
                return cached["tree"]
        except (OSError, ValueError, AttributeError, KeyError):
            pass
    tree = build_tree()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"stamp": stamp, "tree": tree}, fh)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only HOME: complete from the tree built now
    return tree


def store_names() -> list[str]:
    try:
        from symfonic_cli.location import load_config

        config = load_config()
    except Exception:  # a broken config file must not break a TAB
        return []
    stores = config.get("stores", {}) if isinstance(config, dict) else {}
    return sorted(k for k in stores if isinstance(k, str)) if isinstance(stores, dict) else []


def candidates(tree: dict, args: list[str], incomplete: str) -> list[str]:
    node = tree
    root_options = tree["options"]
    pending = None  # the option whose value comes next
    positional = 0  # arguments given to the command reached
    for arg in args:
        if pending is not None:
            pending = None
            continue
        if arg == "--":
            return []
        if arg.startswith("-"):
            name = arg.split("=", 1)[0]
            spec = node["options"].get(name) or root_options.get(name)
            if spec and spec["value"] and "=" not in arg:
                pending = spec
            continue
        sub = node.get("commands", {}).get(arg)
        if sub is not None:
            node, positional = sub, 0
        else:
            positional += 1
    if pending is None and incomplete.startswith("--") and "=" in incomplete:
        name, incomplete_value = incomplete.split("=", 1)
        spec = node["options"].get(name) or root_options.get(name)
        if spec and spec["value"]:
            return [f"{name}={v}" for v in _values(spec, incomplete_value)]
        return []
    if pending is not None:
        if pending.get("key"):
            return thread_keys(args, incomplete)
        return _values(pending, incomplete)
    if incomplete.startswith("-"):
        names = list(node["options"]) + [o for o in root_options if o not in node["options"]]
        if node is not tree:
            names = [o for o in names if o not in ROOT_ONLY]
        return [o for o in names if o.startswith(incomplete) and o != "--help" or o == incomplete]
    if node.get("key_argument") and positional == 0 and not any(a.split("=", 1)[0] in _THREAD_GIVEN for a in args):
        return thread_keys(args, incomplete)
    return [name for name in node.get("commands", {}) if name.startswith(incomplete)]


def _values(spec: dict, incomplete: str) -> list[str]:
    words = list(spec.get("choices") or ())
    if spec.get("store"):
        words += store_names()
    if spec.get("zone"):
        words += zone_names()
    low = incomplete.lower()
    return [w for w in words if w.lower().startswith(low)]


def zone_names() -> list[str]:
    """``UTC`` and the IANA zones this machine knows (what ``--tz`` accepts by name)."""
    try:
        from zoneinfo import available_timezones

        return ["UTC", *sorted(z for z in available_timezones() if z != "UTC")]
    except Exception:  # no zone database: nothing to offer
        return ["UTC"]


def _option_value(args: list[str], names: tuple[str, ...]) -> str | None:
    """The last value given on the command line for one of ``names`` (``--x V`` or ``--x=V``)."""
    found = None
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name in names:
            if eq:
                found = value
            elif i + 1 < len(args):
                found = args[i + 1]
    return found


def completable(key: str) -> bool:
    """A key a shell can take back as one word: printable, no white space. Others are left out of
    the answer (a hostile key must not inject a line of its own into the completion protocol)."""
    return key.isprintable() and not any(c.isspace() for c in key)


def thread_keys(args: list[str], incomplete: str) -> list[str]:
    """Up to MAX_KEYS thread keys starting with ``incomplete``, from the store given by
    ``--store``/``-s`` on the command line or ``SYMFONIC_STORE``, opened read-only. Any failure
    (no store, a server that does not answer) completes nothing: a TAB never prints an error."""
    store = _option_value(args, ("--store", "-s")) or os.environ.get("SYMFONIC_STORE")
    if not store:
        return []
    try:
        from symfonic_cli.api.opening import open_backend
        from symfonic_cli.location import resolve_store

        location = resolve_store(store)
        options: dict[str, object] = {}  # over the config entry's (open_backend merges them)
        for opt, name in _CONNECTION.items():
            value = _option_value(args, (opt,))
            if value is not None:
                options[name] = value
        options["connect_timeout"] = _TAB_CONNECT_TIMEOUT
        with open_backend(location, options) as opened:
            keys = opened.thread_keys_with_prefix(incomplete, limit=MAX_KEYS)
    except Exception:
        return []
    return [k for k in keys if completable(k)][:MAX_KEYS]


def _split(line: str) -> list[str]:
    import shlex

    try:
        return shlex.split(line)
    except ValueError:  # an open quote: complete what is there
        return line.split()


def main(mode: str) -> None:
    """Answer one completion request of the shells' protocol and exit."""
    shell = mode.split("_", 1)[-1]
    breaks = ""
    if shell == "bash" and os.environ.get("COMP_LINE"):
        # The line up to the cursor, split as the user's shell quotes it: bash's own COMP_WORDS
        # splits at every COMP_WORDBREAKS character, ':' of a thread key included.
        line = os.environ["COMP_LINE"]
        try:
            line = line[: int(os.environ.get("COMP_POINT", len(line)))]
        except ValueError:
            pass
        words = _split(line)
        args = words[1:]
        incomplete = args.pop() if args and not line.endswith((" ", "\t")) else ""
        breaks = os.environ.get("COMP_WORDBREAKS", "")
    elif shell == "bash":
        words = _split(os.environ.get("COMP_WORDS", ""))
        try:
            cword = int(os.environ.get("COMP_CWORD", "0"))
        except ValueError:
            cword = len(words)
        args = words[1:cword]
        incomplete = words[cword] if cword < len(words) else ""
    else:
        line = os.environ.get("_TYPER_COMPLETE_ARGS", "")
        words = _split(line)
        args = words[1:]
        if args and not line.endswith(" "):
            incomplete = args.pop()
        else:
            incomplete = ""
    found = candidates(load_tree(), args, incomplete)
    if breaks:
        # bash replaces only the part of the word after its last break character.
        cut = max(incomplete.rfind(c) for c in breaks) + 1
        found = [w[cut:] for w in found] if cut else found
    if shell == "zsh":
        if found:
            quoted = "\n".join('"' + w.replace('"', '""').replace("'", "''").replace("$", "\\$").replace("`", "\\`").replace(":", "\\\\:") + '"' for w in found)
            sys.stdout.write(f"_arguments '*: :(({quoted}))'")
        else:
            sys.stdout.write("_files")
    elif shell == "fish":
        action = os.environ.get("_TYPER_COMPLETE_FISH_ACTION", "")
        if action == "is-args":
            raise SystemExit(0 if found else 1)
        sys.stdout.write("\n".join(found))
    else:
        sys.stdout.write("\n".join(found))
    sys.stdout.flush()
