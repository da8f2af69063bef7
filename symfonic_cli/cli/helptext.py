"""What ``--help`` shows beyond each option's own text: examples (an epilog per command), the
choices of an option as ``[a|b|c]`` and argument descriptions
(typer's plain help leaves those out). Applied to the click tree once it is built, so the command
modules stay about what the commands do."""

from __future__ import annotations

import click

from symfonic_cli.vocabulary import SHELLS, metavar, one_of, option_words

ARGUMENT_HELP = {
    # Every command of one thread (cli/options.py KeyArg).
    ("*", "key"): "The thread key tenant:sub:session (the same as --thread KEY; give one of them).",
    ("thread", "diff", "refs"): "The thread key (or --thread), then checkpoint A (an id, or -1 for the latest, -2 for the one before, ...) and B to compare it with (same forms).",
    ("demo", "path"): "The SQLite file to create (must not exist yet); the demo never overwrites a file.",
    ("threads", "search", "text"): "The text to find; case-insensitive by Unicode case folding (straße finds STRASSE).",
    ("completion", "install", "shell"): f"{one_of(SHELLS)}; default: the shell in $SHELL.",
    ("completion", "show", "shell"): f"{one_of(SHELLS)}; default: the shell in $SHELL.",
}
EXAMPLES = {
    ("transcript", "show"): [
        "symfonic transcript show -s demo.db --tenant acme --session s-001",
        "symfonic transcript show -s demo.db acme:_:s-001 --speaker user --index 0",
        "symfonic transcript show -s prod acme:_:s-001 --since 2026-12-01T08:00 --until 2026-12-01T09:00",
        "symfonic transcript show -s demo.db acme:_:s-001 -f json | jq '.[].content'",
    ],
    ("threads", "list"): [
        "symfonic threads list -s demo.db",
        "symfonic threads list -s prod --tenant acme --limit 20",
        "symfonic threads list -s prod --status interrupted,error --with-size",
        "symfonic threads list -s prod --columns key,last_activity,first",
    ],
    ("threads", "search"): [
        "symfonic threads search -s demo.db 'order 1042'",
        "symfonic threads search -s prod refund --tenant acme --active-within 7d",
        "symfonic threads search -s prod call-42 --tools --case-sensitive -f json",
    ],
    ("store", "info"): ["symfonic store info -s demo.db", "symfonic store info -s prod -f json"],
    ("store", "list"): ["symfonic store list", "symfonic store list -f json"],
    ("store", "usage"): ["symfonic store usage -s demo.db", "symfonic store usage -s prod --top 20 --keep 3 -f json"],
    ("compat", "report"): [
        "symfonic compat report -s prod",
        "symfonic compat report -s prod acme:_:s-001 --grace 30m",
        "symfonic compat report -s prod --by-thread -f jsonl",
        "symfonic compat report -s prod --fail-on corrupt,newer   # exit 5 on a finding",
    ],
    ("compat", "show"): [
        "symfonic compat show -s prod acme:_:s-001",
        "symfonic compat show -s prod acme:_:s-001 --checkpoint CHECKPOINT_ID",
    ],
    ("thread", "show"): ["symfonic thread show -s demo.db acme:_:s-001", "symfonic thread show -s prod --tenant acme --session s-001 -f json"],
    ("thread", "history"): ["symfonic thread history -s demo.db acme:_:s-001", "symfonic thread history -s prod acme:_:s-001 -n 5 -f json"],
    ("thread", "diff"): ["symfonic thread diff -s demo.db acme:_:s-001 -2 -1", "symfonic thread diff -s prod acme:_:s-001 CHECKPOINT_A CHECKPOINT_B -f json"],
    ("thread", "export"): [
        "symfonic thread export -s prod --tenant acme --session s-001 --output s-001-export.zip",
        "symfonic thread export -s prod --from-file keys.txt --with-state --output export/",
        "symfonic thread export -s prod --tenant acme --inactive-for 90d --output idle.tar.gz",
    ],
    ("thread", "erase"): [
        "symfonic thread erase -s demo.db acme:_:s-001 --dry-run",
        "symfonic thread erase -s prod acme:_:s-001 --receipt erase-receipts.jsonl",
        "symfonic thread erase -s prod --tenant acme --all-sessions --dry-run",
        "symfonic thread erase -s prod --inactive-for 90d --receipt retention.jsonl",
    ],
    ("thread", "prune"): [
        "symfonic thread prune -s demo.db --all --dry-run",
        "symfonic thread prune -s prod --all --keep 1 --receipt prune-receipts.jsonl",
        "symfonic thread prune -s prod --tenant acme --all-sessions --older-than 30d --compact",
    ],
    ("thread", "rewind"): [
        "symfonic thread rewind -s demo.db acme:eu:s-003 --to -2 --dry-run",
        "symfonic thread rewind -s prod acme:_:s-001 --to CHECKPOINT_ID --ticket SUP-1 --receipt rewinds.jsonl",
        "symfonic thread rewind -s prod --tenant acme --session s-001 --before-message 4",
    ],
    ("migrate",): [
        "symfonic migrate --from demo.db --to copy.db --init-target --all --dry-run",
        "symfonic migrate --from demo.db --to copy.db --init-target --all",
        "symfonic migrate --from old.db --to postgresql://support@db/agents --tenant acme --verify-only",
    ],
    ("mcp",): [
        "symfonic mcp -s demo.db --tenant acme",
        "symfonic mcp -s prod --tenant acme --sub-tenant eu --sub-tenant _",
        "symfonic mcp -s prod --tenant acme --http 127.0.0.1:8765 --token-file tok",
    ],
    ("demo",): ["symfonic demo demo.db", "symfonic demo /tmp/try.db && symfonic threads list -s /tmp/try.db",
                "symfonic demo big.db --threads 500 --turns 10"],
    ("completion", "install"): ["symfonic completion install", "symfonic completion install zsh"],
    ("completion", "show"): ["symfonic completion show bash > ~/symfonic.bash", "symfonic completion show fish"],
}


def epilog(lines: list[str]) -> str:
    # \b keeps click from rewrapping the block.
    return "Examples:\n\n\b\n" + "\n".join(f"  {line}" for line in lines)


# The order commands are listed in: the way a support engineer works (read, find, inspect, then
# change), not the order the modules register them.
ORDER = {
    (): ("transcript", "threads", "thread", "browse", "store", "compat", "migrate", "mcp", "demo", "completion"),
    ("thread",): ("show", "history", "diff", "rewind", "export", "erase", "prune"),
    ("threads",): ("list", "search"),
    ("store",): ("info", "usage", "list"),
    ("compat",): ("report", "show"),
}


def summary(text: str) -> str:
    """A command's line in its group's listing: the first sentence of its help, whole (click cut
    it at about 45 characters, mid-sentence: issue #37). A full stop inside brackets ends none."""
    first = " ".join(text.split("\n\n", 1)[0].split())
    depth = 0
    for i, ch in enumerate(first):
        depth += (ch in "([{") - (ch in ")]}")
        if ch in ".!?" and depth == 0 and first[i + 1:i + 2] == " ":
            return first[: i + 1]
    return first


# The root's help, before its commands: three lines that work in an empty folder.
QUICK_START = [
    "symfonic demo demo.db",
    "symfonic threads list --store demo.db",
    "symfonic transcript show --store demo.db acme:eu:s-003",
]


def _commands_first(root: click.Command) -> None:
    """``symfonic --help``: the quick start and the commands first (they fit a 24-row screen), the
    global options once, at the end, as gh and kubectl list theirs."""
    if not isinstance(root, click.Group):
        return
    group = root
    commands = group.format_commands

    def format_options(ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Quick start"):
            for line in QUICK_START:
                formatter.write(" " * formatter.current_indent + line + "\n")
        commands(ctx, formatter)
        records = [r for p in group.get_params(ctx) if (r := p.get_help_record(ctx)) is not None]
        with formatter.section("Global options (before or after the command)"):
            formatter.write_dl(records)

    def no_commands(ctx: click.Context, formatter: click.HelpFormatter) -> None:
        pass  # listed by format_options, before the options

    group.format_options = format_options  # type: ignore[method-assign]  # the root's help only
    group.format_commands = no_commands  # type: ignore[method-assign]


def describe(root: click.Command) -> None:
    _commands_first(root)

    def visit(cmd: click.Command, path: tuple[str, ...]) -> None:
        if path and cmd.help and not cmd.short_help:
            cmd.short_help = summary(cmd.help)
        if isinstance(cmd, click.Group) and path in ORDER:
            rank = {name: i for i, name in enumerate(ORDER[path])}
            cmd.commands = dict(sorted(cmd.commands.items(), key=lambda item: rank.get(item[0], len(rank))))
        if path in EXAMPLES and not cmd.epilog:
            cmd.epilog = epilog(EXAMPLES[path])
            _examples_first(cmd)
        for p in cmd.params:
            if isinstance(p, click.Argument):
                text = ARGUMENT_HELP.get((*path, p.name)) or ARGUMENT_HELP.get(("*", p.name or ""))
                if text and not getattr(p, "help", None):
                    p.help = text
            elif isinstance(p, click.Option) and p.metavar is None:
                # [a|b|c] wherever the option takes a word from a fixed list (vocabulary.py).
                words = next((w for w in (option_words(path, o) for o in p.opts) if w), ())
                if words:
                    p.metavar = metavar(words)
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                visit(sub, (*path, name))

    visit(root, ())


def _examples_first(cmd: click.Command) -> None:
    """The examples right after the usage line and the summary, before the options (issue #37:
    what one came for first; the global options stay last)."""
    original = cmd.format_help_text

    def format_help_text(ctx: click.Context, formatter: click.HelpFormatter) -> None:
        original(ctx, formatter)
        click.Command.format_epilog(cmd, ctx, formatter)

    def no_epilog(ctx: click.Context, formatter: click.HelpFormatter) -> None:
        pass

    cmd.format_help_text = format_help_text  # type: ignore[method-assign]  # this command's help only
    cmd.format_epilog = no_epilog  # type: ignore[method-assign]  # printed by format_help_text
