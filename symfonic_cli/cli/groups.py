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
)
