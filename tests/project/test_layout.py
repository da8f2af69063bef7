"""The package's shape (README "Layout"): no module over 450 lines, and no import cycle between its
modules, counting the imports inside functions (the lazy ones run too, just later)."""

from __future__ import annotations

import ast
from pathlib import Path

import symfonic_cli

PACKAGE = Path(symfonic_cli.__file__).parent
MAX_LINES = 450


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ["symfonic_cli", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports anywhere in its body (``from a import b`` is
    module ``a.b`` when that is a module, else ``a``)."""

    def module_of(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str | None] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(module_of(a.name) for a in node.names if a.name.split(".")[0] == "symfonic_cli")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base.split(".")[0] != "symfonic_cli":
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                out.add(full if full in modules else module_of(base))
    out.discard(None)
    out.discard(name)
    return out  # type: ignore[return-value]


def import_cycles() -> list[list[str]]:
    """Each set of modules that import one another, directly or round about (Tarjan's SCCs)."""
    modules = _modules()
    graph = {name: sorted(_imports(name, path, modules)) for name, path in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                cycles.append(sorted(part))

    for name in graph:
        if name not in index:
            visit(name)
    return sorted(cycles)


def test_no_module_over_450_lines():
    long = {
        str(path.relative_to(PACKAGE.parent)): n
        for path in _modules().values()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"modules over {MAX_LINES} lines: {long}"


def test_no_import_cycle():
    cycles = import_cycles()
    assert cycles == [], "import cycles (imports inside functions included): " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_finder_sees_lazy_imports(tmp_path, monkeypatch):
    # The finder itself must see an import inside a function, or the test above proves nothing.
    pkg = tmp_path / "symfonic_cli"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from symfonic_cli.sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    from symfonic_cli import a\n")
    (pkg / "c.py").write_text("def g():\n    from . import a\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["PACKAGE"]), "PACKAGE", pkg)
    assert import_cycles() == [["symfonic_cli.a", "symfonic_cli.sub.b"]]


def test_the_package_never_uses_its_own_api_through_the_root():
    # The root package loads the API by name (symfonic_cli/__init__.py); that stays out of every
    # cycle only while no module of the package takes an API name from the root.
    used = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "symfonic_cli" and not node.level:
                used += [f"{name}: {a.name}" for a in node.names if a.name in symfonic_cli.API]
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "symfonic_cli" and node.attr in symfonic_cli.API:
                used.append(f"{name}: symfonic_cli.{node.attr}")
    assert used == []


def _names_a_store(node: ast.AST) -> bool:
    """``store``, ``st``, ``self._store``, ``source_store``: what a probe would be asked of."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name == "st" or "store" in name


def test_every_backend_implements_the_whole_store_protocol():
    # No method of the protocol is optional: callers call it, never probe for it with getattr, so
    # a backend missing one (or a typo) fails here by name instead of taking a slower path.
    import inspect

    from symfonic_cli.stores import protocol
    from symfonic_cli.stores.mongodb.connect import MongoStore
    from symfonic_cli.stores.postgres.connect import PostgresStore
    from symfonic_cli.stores.sqlite.connect import SqliteStore

    wanted = {
        name
        for section in protocol.Store.__mro__
        if section.__module__.startswith(protocol.__name__)  # protocol.py, protocol_changes.py
        for name, value in [*vars(section).items(), *((n, None) for n in vars(section).get("__annotations__", {}))]
        if (value is None or inspect.isfunction(value)) and not name.startswith("_")
    }
    assert {"iter_checkpoint_heads", "iter_message_writes", "read_message_state", "iter_run_states",
            "encryption_census", "search_candidates", "writes_replay_order", "open_warnings", "erase_thread"} <= wanted
    missing = {
        cls.__name__: sorted(n for n in wanted if n not in _declared(cls))
        for cls in (SqliteStore, PostgresStore, MongoStore)
    }
    assert missing == {"SqliteStore": [], "PostgresStore": [], "MongoStore": []}
    probes = [
        f"{name}: {node.args[1].value}"
        for name, path in _modules().items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
        and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value in wanted
        and _names_a_store(node.args[0])
    ]
    assert probes == [], "protocol methods probed instead of called"


def test_no_two_sections_of_a_store_define_the_same_private_helper():
    # A backend is its sections combined (connect.py); a name two of them define is silently the
    # first one's (ExactActivity._exact once hid MongoSection._exact: every MongoDB read failed).
    from symfonic_cli.stores.mongodb.connect import MongoStore
    from symfonic_cli.stores.postgres.connect import PostgresStore
    from symfonic_cli.stores.sqlite.connect import SqliteStore

    clashes = []
    for store in (SqliteStore, PostgresStore, MongoStore):
        owner: dict[str, type] = {}
        for base in reversed(store.__mro__[1:]):
            for name, value in vars(base).items():
                # Private helpers only: public methods are overridden on purpose (ExactActivity wraps
                # the sections' listing through super()).
                if not callable(value) or not name.startswith("_") or name.startswith("__"):
                    continue
                first = owner.get(name)
                if first is not None and first not in base.__mro__ and base not in first.__mro__:
                    clashes.append(f"{store.__name__}.{name}: {first.__name__} and {base.__name__}")
                owner[name] = base
    assert clashes == []


def _declared(cls: type) -> set[str]:
    """What a class and its bases define or declare (methods, attributes, annotations)."""
    return {name for base in cls.__mro__ for name in (*vars(base), *vars(base).get("__annotations__", {}))}


def test_each_section_uses_only_what_its_bases_declare():
    # A section mixin that used an attribute a sibling section sets or defines worked only as part
    # of the whole store; its backend's base (stores/<kind>/_common.py) declares what they share.
    import inspect

    from symfonic_cli.stores import protocol
    from symfonic_cli.stores.mongodb.connect import MongoStore
    from symfonic_cli.stores.postgres.connect import PostgresStore
    from symfonic_cli.stores.sqlite.connect import SqliteStore

    public = _declared(protocol.Store)
    undeclared = []
    for store in (SqliteStore, PostgresStore, MongoStore):
        for section in store.__mro__[1:]:
            if not section.__module__.startswith("symfonic_cli.stores"):
                continue
            tree = ast.parse(inspect.getsource(section))
            used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"}
            set_here = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}
            undeclared += [f"{section.__name__}.{name}" for name in sorted(used - _declared(section) - public - set_here)]
    assert undeclared == []


def test_the_section_check_sees_an_undeclared_attribute():
    import inspect

    class Base:
        conn: object

    class Section(Base):
        def read(self):
            return self.conn, self._sibling_helper()

    tree = ast.parse(inspect.getsource(Section).replace("    class", "class").replace("\n        ", "\n    "))
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"}
    assert used - _declared(Section) == {"_sibling_helper"}


# The floors, lowest first (docs/contributing.md "Layout"): a module imports only from its own floor
# and the floors below it, imports inside functions and under TYPE_CHECKING counted. Each entry is a
# top-level module or package of symfonic_cli ("" is the package's root, __init__.py).
FLOORS: tuple[tuple[str, frozenset[str]], ...] = (
    ("words", frozenset({"", "errors", "vocabulary", "limits", "versions", "kinds"})),
    ("values", frozenset({"clock", "location", "threadkey", "environment", "inputs", "retention", "output_paths"})),
    ("codec", frozenset({"codec"})),
    ("render", frozenset({"render", "pager", "progress"})),
    ("model", frozenset({"model"})),
    ("stores", frozenset({"stores"})),
    ("lookups", frozenset({"suggestions", "selection"})),
    ("changes", frozenset({"changes"})),  # what every changing run shares: outcomes, receipts, Report, loop, pace, locks
    ("features", frozenset({"transcript", "compat", "erase", "history", "threadstate", "search", "migrate",
                            "storage", "prune", "export", "listing", "demo", "memory", "rewind"})),
    ("api", frozenset({"api"})),
    ("front ends", frozenset({"cli", "complete", "completions", "__main__", "mcp", "browse"})),
)
# Inside the features' floor, which feature another may use (one that is not listed here uses none).
FEATURE_USES: dict[str, frozenset[str]] = {
    "history": frozenset({"transcript"}),
    "threadstate": frozenset({"transcript", "memory"}),
    "search": frozenset({"transcript"}),
    "migrate": frozenset({"transcript"}),
    "erase": frozenset({"memory"}),  # the plan counts the retained messages an erase deletes
    "export": frozenset({"history", "transcript", "memory"}),
    "memory": frozenset({"transcript"}),
    "listing": frozenset({"threadstate"}),
    "demo": frozenset({"compat"}),
    "rewind": frozenset({"history", "transcript", "threadstate"}),
}


def _top(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def floor_violations() -> list[str]:
    """Every import of a module from a floor above its own, or of a feature its feature may not use."""
    floor_of = {name: i for i, (_, names) in enumerate(FLOORS) for name in names}
    features = dict(FLOORS)["features"]
    modules = _modules()
    unplaced = sorted({_top(m) for m in modules} - set(floor_of))
    found = [f"{name}: on no floor (add it to FLOORS)" for name in unplaced]
    for name, path in modules.items():
        own = _top(name)
        if own not in floor_of:
            continue
        for used in sorted(_imports(name, path, modules)):
            other = _top(used)
            if other == own or other not in floor_of:
                continue
            if floor_of[other] > floor_of[own]:
                found.append(f"{name} imports {used} ({FLOORS[floor_of[other]][0]} is above {FLOORS[floor_of[own]][0]})")
            elif own in features and other in features and other not in FEATURE_USES.get(own, frozenset()):
                found.append(f"{name} imports {used} (feature {own} may use only {sorted(FEATURE_USES.get(own, ()))})")
    return found


def test_nothing_imports_from_a_floor_above():
    assert floor_violations() == []


def test_the_browser_and_the_mcp_server_import_nothing_of_the_command_line():
    # Front ends side by side: cli/ routes to browse/ and mcp/; they read through api/ and render through render/.
    modules = _modules()
    found = sorted(f"{name} imports {used}" for name, path in modules.items() if _top(name) in {"browse", "mcp"}
                   for used in _imports(name, path, modules) if _top(used) == "cli")
    assert found == []


# What a front end may not import: what lies below the API (docs/contributing.md "Layout"). It
# reads and renders through api/ (and render/, the words and values floors below it).
BELOW_THE_API = ("codec", "model", "stores", "lookups", "changes", "features")


def front_end_reaches() -> list[str]:
    """Every import, by a front end, of a module below the API."""
    floors = dict(FLOORS)
    below = {name for floor in BELOW_THE_API for name in floors[floor]}
    modules = _modules()
    return sorted(f"{name} imports {used}" for name, path in modules.items()
                  if _top(name) in floors["front ends"]
                  for used in _imports(name, path, modules) if _top(used) in below)


def test_the_front_ends_read_through_the_api():
    # Every module of the command line, the browser, the MCP server and TAB completion opens
    # stores through api/opening.py and reads, changes or writes (the demo) through api/: no
    # feature's driver, no store, no codec.
    assert front_end_reaches() == []


def test_the_front_end_check_sees_a_driver_import(tmp_path, monkeypatch):
    pkg = tmp_path / "symfonic_cli"
    for sub in ("cli", "api", "transcript"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "transcript" / "read.py").write_text("")
    (pkg / "api" / "store.py").write_text("from symfonic_cli.transcript import read\n")
    (pkg / "cli" / "show.py").write_text("def f():\n    from symfonic_cli.transcript.read import read_transcript\n")
    (pkg / "cli" / "good.py").write_text("from symfonic_cli.api import store\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["PACKAGE"]), "PACKAGE", pkg)
    assert front_end_reaches() == ["symfonic_cli.cli.show imports symfonic_cli.transcript.read"]


def test_the_floor_check_sees_an_upward_import(tmp_path, monkeypatch):
    # The check itself must see a library module reaching up into the command line, lazily too.
    pkg = tmp_path / "symfonic_cli"
    for sub in ("cli", "api", "transcript", "compat", "history"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "api" / "store.py").write_text("def f():\n    from symfonic_cli.cli import common\n")
    (pkg / "cli" / "common.py").write_text("from symfonic_cli.api import store\n")
    (pkg / "compat" / "m.py").write_text("def g():\n    from symfonic_cli.transcript import rows\n")
    (pkg / "transcript" / "rows.py").write_text("")
    (pkg / "history" / "h.py").write_text("from symfonic_cli.transcript import rows\n")  # a feature it may use
    (pkg / "odd.py").write_text("")
    monkeypatch.setattr(__import__(__name__, fromlist=["PACKAGE"]), "PACKAGE", pkg)
    assert floor_violations() == [
        "odd: on no floor (add it to FLOORS)",
        "symfonic_cli.api.store imports symfonic_cli.cli.common (front ends is above api)",
        "symfonic_cli.compat.m imports symfonic_cli.transcript.rows (feature compat may use only [])",
    ]
