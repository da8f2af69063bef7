"""The command groups and the module that registers each, imported only when that group runs (or
for help/completion): read by the entry point (``app.py``) and the typer root (``root.py``)."""

from symfonic_cli.vocabulary import GROUP_HELP

# Each command group's module, imported only when that group runs (or for help/completion); its
# ``register(root)`` adds the group (or root command) to the root.
GROUPS = {
    "transcript": "symfonic_cli.cli.transcript",
    "threads": "symfonic_cli.cli.threads",
    "store": "symfonic_cli.cli.store",
    "compat": "symfonic_cli.cli.compat",
    "thread": "symfonic_cli.cli.thread",
    "migrate": "symfonic_cli.cli.migrate",
    "demo": "symfonic_cli.cli.demo",
    "browse": "symfonic_cli.cli.browse",
    "mcp": "symfonic_cli.cli.mcp",
    "completion": "symfonic_cli.cli.completion",
}
# Modules that add commands to a group another module owns (its ``app``): importing them is all.
GROUP_EXTENSIONS = {
    "thread": ("symfonic_cli.cli.history", "symfonic_cli.cli.export", "symfonic_cli.cli.erase", "symfonic_cli.cli.prune",
               "symfonic_cli.cli.rewind"),
}
# What the root's help says of each command and group (vocabulary.py: the groups' own help too):
# ``symfonic --help`` builds the root from these alone instead of importing and converting every
# command (about 80 ms). tests/cli/test_terminal_speed.py checks that both builds print the same help.
SUMMARIES = GROUP_HELP
# Commands (not groups) directly under the root.
ROOT_COMMANDS = ("migrate", "demo", "browse", "mcp")
