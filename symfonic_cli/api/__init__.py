"""The Python API (README "Python API", docs/python-api.md): what the commands do, as functions.

``open_store(location, **options)`` gives a read-only ``Store`` (``threads``, ``transcript``,
``thread_state``, ``history``, ``diff``, ``compat_report``, ``usage``, ``search``, ``info``);
``erase``, ``export``, ``prune``, ``migrate`` and ``rewind`` change stores with the explicit choices their commands ask for
(``plan_erase`` ... return a ``Plan`` first, ``execute(plan)`` runs it). Errors are
``SymfonicError`` subclasses carrying the command's exit code.

Each name is loaded on first use (PEP 562): the command line imports ``symfonic_cli.api.*``
modules, and ``--help`` and TAB import none of what a name it does not use would bring.
"""

# Each public name and the module that defines it.
_HOME = {
    "erase": "changes", "export": "changes", "migrate": "changes", "prune": "changes", "rewind": "changes",
    "Plan": "plans", "execute": "plans", "plan_erase": "plans", "plan_export": "plans", "plan_migrate": "plans",
    "plan_prune": "plans", "plan_rewind": "plans",
    "Record": "store", "Store": "store", "open_store": "opening", "RunResult": "symfonic_cli.changes.result",
}

__all__ = ["Plan", "Record", "RunResult", "Store", "erase", "execute", "export", "migrate", "open_store", "plan_erase",
           "plan_export", "plan_migrate", "plan_prune", "plan_rewind", "prune", "rewind"]

# typing.TYPE_CHECKING without importing typing: mypy sees the names, a run loads them by name.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.api.changes import erase, export, migrate, prune, rewind
    from symfonic_cli.api.plans import (
        Plan, execute, plan_erase, plan_export, plan_migrate, plan_prune, plan_rewind,
    )
    from symfonic_cli.api.opening import open_store
    from symfonic_cli.api.store import Record, Store
    from symfonic_cli.changes.result import RunResult


def __getattr__(name: str) -> object:
    from importlib import import_module

    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'symfonic_cli.api' has no attribute {name!r}")
    value = getattr(import_module(home if "." in home else f"symfonic_cli.api.{home}"), name)
    globals()[name] = value  # asked once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
