"""The words people type and read: each set of option values, and each command group's help, once.

Typer's options, the quick route (``cli/fast.py``, ``cli/optionspec.py``), TAB completion
(``complete.py``), the help (``cli/helptext.py``, ``cli/groups.py``) and the logic that checks a
value (``model/triggers.py``, ``threadstate/listing.py``, ``transcript/rows.py``,
``compat/report.py``, ``environment.py``) all read these tuples; ``tests/cli/test_vocabulary.py``
checks that nothing spells one of them out again.

The lowest floor: imports nothing (``--help`` and a TAB read it and must stay instant).
"""


def metavar(words: tuple) -> str:
    """``[a|b|c]``: the words as --help shows an option's value."""
    return "[" + "|".join(words) + "]"


def one_of(words: tuple, last: str = "or") -> str:
    """``a, b, c or d``: the words in a sentence."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {last} {words[-1]}"


def listed(words: tuple) -> str:
    """``a, b, c``: the words as an error's hint lists them."""
    return ", ".join(words)


# --format: what every command prints; the commands that print records (RECORD_COMMANDS) take
# RECORD_FORMATS, CSV too. Two are for a reader (READER_FORMATS): a command may lay its answer out
# for a person there (a transcript's turns, a history's lanes). Every other word is for a program:
# its writer in render/writers.py writes every command's records and documents, whatever the command.
FORMATS = ("table", "text", "json", "jsonl")
READER_FORMATS = ("table", "text")
RECORD_FORMATS = (*FORMATS, "csv")
RECORD_COMMANDS = (("threads", "list"), ("threads", "search"), ("transcript", "show"), ("thread", "history"), ("store", "usage"))
# threads list --status (and thread show): a thread's run state.
STATUSES = ("interrupted", "error", "pending", "done")
# threads list --sort; the first is the default (newest activity first).
SORTS = ("last-activity", "first-activity", "checkpoints", "size")
DEFAULT_SORT = SORTS[0]
# The role of a transcript row; transcript show --speaker takes one, a comma list, or ALL.
ROLES = ("user", "assistant", "tool", "system", "other")
ALL = "all"
SPEAKERS = (*ROLES, ALL)
# --color: styles on a terminal unless NO_COLOR or TERM=dumb (auto), always, or never.
COLOR_MODES = ("auto", "always", "never")
# compat report's findings (its JSON's "findings" and --fail-on's words).
FINDINGS = ("corrupt", "newer", "interrupted", "legacy", "plaintext")
DEFAULT_FAIL_ON = ("corrupt", "newer")
ENVELOPE_KEY_ENV = "SYMFONIC_ENVELOPE_KEY"  # compat's --envelope-key when not given
# symfonic completion install|show SHELL.
SHELLS = ("bash", "zsh", "fish")

# Option spelling -> the words it takes (shown as [a|b|c] in --help, offered on TAB).
OPTION_WORDS = {
    "--format": FORMATS,
    "-f": FORMATS,
    "--status": STATUSES,
    "--sort": SORTS,
    "--speaker": SPEAKERS,
    "--color": COLOR_MODES,
}



def option_words(path: tuple, option: str) -> tuple:
    """The words ``option`` of the command at ``path`` (("threads", "list")) takes; () for none."""
    if option in ("--format", "-f") and tuple(path) in RECORD_COMMANDS:
        return RECORD_FORMATS
    return OPTION_WORDS.get(option, ())


# What the root's help says of each group and root command, and the group's own help.
GROUP_HELP = {
    "transcript": "Read a thread's conversation.",
    "threads": "List a store's threads.",
    "store": "Describe a store.",
    "compat": "Report on the compatibility envelopes of a store (read-only).",
    "thread": "Work on threads: show (run state), history (checkpoints over time), diff, export, erase, prune "
    "and rewind.",
    "migrate": "Copy threads from --from to --to, verified. Never overwriting, one target transaction per thread.",
    "browse": "Browse a store in the terminal, read-only. Threads, transcripts, run state, history, diffs, "
    "compat and usage, a key each.",
    "mcp": "Serve a store read-only to AI assistants (Model Context Protocol). Only the tenants granted, "
    "every call on record.",
    "demo": "Create a small real demo store to try. It runs a LangGraph agent graph with a scripted model.",
    "completion": f"Install TAB completion for {one_of(SHELLS)}. It completes commands, options, "
    "--format/--speaker/--status values and store names.",
}

