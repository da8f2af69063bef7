"""The quick route: ``threads list`` and ``search``, ``store info``, ``compat report``, without typer and click.

These commands answer in tens of milliseconds, and typer with click costs about 50 ms more
to import, which doubled ``threads list`` (and was a tenth of ``threads list --status`` on a
large store). Only a plain command line takes this route: the two command words first, then
the command's argument (search's text: once, not dash-leading) anywhere among known options,
each given once (``--status`` may repeat) with a value that needs no conversion beyond what is
checked here, and bare flags. Anything else (help, completion, root
options, an unknown, repeated or dash-leading option value, a flag with a value, a number typer
would have to judge, a bad environment value) goes to typer, which then gives the same result
or its own usage error.
The options are read from ``optionspec.py``, the table the typer commands are built from too.
``tests/cli/test_fast_route.py`` runs both routes side by side and checks the option tables
against the typer commands.
"""

from __future__ import annotations

import os

from symfonic_cli.cli.common import (
    AES_KEY_FILE_ENV,
    CONNECT_TIMEOUT_ENV,
    DEBUG_ENV,
    DEFAULT_CONNECT_TIMEOUT,
    FALSE_WORDS,
    MAX_CONNECT_TIMEOUT,  # noqa: F401 - the quick route's bounds, read by tests/cli/test_fast_route.py
    MAX_COUNT,
    MIN_CONNECT_TIMEOUT,  # noqa: F401
    ROOT_ENV,
    TRUE_WORDS,
    TZ_ENV,
    apply_root_options,
    connect_timeout_in_range,
    set_tz,
)
from symfonic_cli.cli.optionspec import QUICK, TYPER_ONLY as OPTIONSPEC_TYPER_ONLY
from symfonic_cli.cli.rootspec import opts

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.environment import Environment
    from typing import Any, Callable, Optional


def _spellings(keep: Callable[[dict[str, Any]], bool]) -> dict[tuple[str, str], dict[str, str]]:
    """Option spelling -> parameter name, per command, of the options ``keep(spec)`` chooses."""
    return {words: {opt: name for name, spec in specs.items() if _kind(spec) != "argument" and keep(spec) for opt in spec["opts"]}
            for words, specs in QUICK.items()}


def _kind(spec: dict) -> str:
    return spec.get("kind", "text")


# The command lines of optionspec.QUICK, from the same table the typer commands are built from.
# Option spelling -> parameter name, per command; each parameter takes one string value.
ROUTES: dict[tuple[str, str], dict[str, str]] = _spellings(lambda spec: _kind(spec) != "flag")
# Root options the quick route also takes after the command name (as rootopts.everywhere gives
# every typer command): spelling -> parameter name. Their environment variables: ROOT_AFTER_ENV.
# (--tz's environment variable, SYMFONIC_TZ, is read in run(), as the root reads it.)
ROOT_AFTER: dict[str, str] = {o: "tz" for o in opts("tz")}
# Flags (no value; True when given once), per command: spelling -> parameter name.
FLAGS: dict[tuple[str, str], dict[str, str]] = _spellings(lambda spec: _kind(spec) == "flag")
# The positional argument, per command that takes one: its parameter name.
ARGUMENTS: dict[tuple[str, str], str] = {words: name for words, specs in QUICK.items()
                                         for name, spec in specs.items() if _kind(spec) == "argument"}
# Options only typer handles: a command line using one of them goes through typer.
# Spelling -> parameter name, as in ROUTES.
TYPER_ONLY: dict[tuple[str, str], dict[str, str]] = OPTIONSPEC_TYPER_ONLY
_ALL_SPECS = [(name, spec) for specs in QUICK.values() for name, spec in specs.items()]
# Parameters typer converts to int (0 to MAX_COUNT); only plain digits in range are taken here.
INT_PARAMS = {name for name, spec in _ALL_SPECS if _kind(spec) == "count"}
# Parameters that may be repeated: a list of their values in order (None when not given).
MULTI_PARAMS = {name for name, spec in _ALL_SPECS if _kind(spec) == "multi"}
# Parameters that fall back to an environment variable when not given (empty counts as unset).
ENV_PARAMS = {name: spec["env"] for name, spec in _ALL_SPECS if "env" in spec}


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _decimal(text: str) -> bool:
    whole, dot, fraction = text.partition(".")
    return _digits(whole) and (not dot or _digits(fraction))


def parse(argv: list[str]) -> Optional[tuple[tuple[str, str], dict]]:
    """The command and its parameters when the quick route can take this command line, else None."""
    if os.environ.get("_SYMFONIC_COMPLETE") or len(argv) < 2:
        return None
    words = (argv[0], argv[1])
    spec = ROUTES.get(words)
    if spec is None:
        return None
    spec = {**spec, **ROOT_AFTER}
    if any(arg.split("=", 1)[0] in TYPER_ONLY.get(words, ()) for arg in argv[2:]):
        return None
    flags = FLAGS.get(words, {})
    params: dict = {}
    rest = argv[2:]
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg in flags:
            if flags[arg] in params:
                return None
            params[flags[arg]] = True
            i += 1
            continue
        if words in ARGUMENTS and not arg.startswith("-"):  # the argument, anywhere among the options
            if ARGUMENTS[words] in params:
                return None
            params[ARGUMENTS[words]] = arg
            i += 1
            continue
        if arg.startswith("--") and "=" in arg:
            name, value = arg.split("=", 1)
            i += 1
        else:
            if i + 1 >= len(rest):
                return None
            name, value = arg, rest[i + 1]
            i += 2
        param = spec.get(name)
        if param is None or value.startswith("-"):
            return None
        if param in MULTI_PARAMS:
            params.setdefault(param, []).append(value)
            continue
        if param in params:
            return None
        if param in INT_PARAMS:
            if not _digits(value) or len(value) > 12 or int(value) > MAX_COUNT:  # typer names the range
                return None
            params[param] = int(value)
        else:
            params[param] = value
    if words in ARGUMENTS and ARGUMENTS[words] not in params:  # typer names what is missing
        return None
    for param in flags.values():
        params.setdefault(param, False)
    for param in set(spec.values()) - params.keys():
        env = ENV_PARAMS.get(param)
        params[param] = (os.environ.get(env) or None) if env else None
    return words, params


def root_options() -> Optional[dict]:
    """The root options from the environment, or None when typer should judge them."""
    debug = os.environ.get(DEBUG_ENV)
    if debug and debug.strip().lower() not in TRUE_WORDS | FALSE_WORDS:
        return None
    timeout = os.environ.get(CONNECT_TIMEOUT_ENV)
    if timeout:
        if not _decimal(timeout) or len(timeout) > 20 or not connect_timeout_in_range(float(timeout)):
            return None
        connect_timeout = float(timeout)
    else:
        connect_timeout = DEFAULT_CONNECT_TIMEOUT
    options = {name: os.environ.get(env) or None for name, env in ROOT_ENV.items()}
    key_file = os.environ.get(AES_KEY_FILE_ENV)  # read and checked as on typer's route
    return {
        "aes_key_file": key_file or None,
        "debug": debug is not None and debug.strip().lower() in TRUE_WORDS,
        "connect_timeout": connect_timeout,
        **options,
    }


# Each command's function, by module (imported only for the command run: compat report's
# loads what threads list does without).
_COMMANDS = {("threads", "list"): ("listing", "threads_list"), ("store", "info"): ("listing", "store_info"),
             ("threads", "search"): ("search", "threads_search"), ("compat", "report"): ("compat_report", "compat_report")}


def _command(words: tuple[str, str]) -> Callable[..., None]:
    from importlib import import_module

    module, name = _COMMANDS[words]
    return getattr(import_module(f"symfonic_cli.cli.{module}"), name)


def run(argv: list[str], environment: Environment) -> bool:
    """Run the command line on the quick route; False when it must go through typer."""
    parsed = parse(argv)
    if parsed is None:
        return False
    roots = root_options()
    if roots is None:
        return False
    words, params = parsed
    # As on typer's route: the environment's zone is judged first, then the one typed.
    typed_tz = params.pop("tz")
    if os.environ.get(TZ_ENV):
        set_tz(environment, os.environ[TZ_ENV])
    if typed_tz is not None:
        set_tz(environment, typed_tz)
    apply_root_options(environment, **roots)
    _command(words)(**params, environment=environment)
    return True
