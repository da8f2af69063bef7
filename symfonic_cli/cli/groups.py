"""The command groups and the module that registers each, imported only when that group runs (or
for help/completion): read by the entry point (``app.py``) and the typer root (``root.py``)."""

# Each command group's module, imported only when that group runs (or for help/completion).
GROUPS = {
    "transcript": "symfonic_cli.cli.transcript",
    "threads": "symfonic_cli.cli.threads",
    "store": "symfonic_cli.cli.store",
    "compat": "symfonic_cli.cli.compat",
    "thread": "symfonic_cli.cli.thread",
    "migrate": "symfonic_cli.cli.migrate",
    "demo": "symfonic_cli.cli.demo",
    "completion": "symfonic_cli.cli.completion",
}
# Modules that add commands to a group another module registers: (group, module).
GROUP_EXTENSIONS = (
    ("thread", "symfonic_cli.cli.history"),
    ("thread", "symfonic_cli.cli.export"),
    ("thread", "symfonic_cli.cli.prune"),
)
# What the root's help says of each command and group: ``symfonic --help`` builds the root from
# these alone instead of importing and converting every command (about 80 ms).
# tests/test_terminal_speed.py checks that both builds print the same help.
SUMMARIES = {
    "transcript": "Read a thread's conversation.",
    "threads": "List a store's threads.",
    "store": "Describe a store.",
    "compat": "Report on the compatibility envelopes of a store (read-only).",
    "thread": "Work on threads: run state, history, diff, export, erase, prune.",  # helptext.GROUP_HELP gives its full description
    "migrate": "Copy threads from --from to --to: never overwriting, one target transaction per thread, then verified.",
    "demo": "Create a small real demo store by running a LangGraph agent graph with a scripted model.",
    "completion": "Install TAB completion for bash, zsh or fish (commands, options, --format/--speaker/--status values, store names).",
}
# Commands (not groups) directly under the root.
ROOT_COMMANDS = ("migrate", "demo")
