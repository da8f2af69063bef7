"""The Python API (README "Python API", docs/python-api.md): what the commands do, as functions.

``open_store(location, **options)`` gives a read-only ``Store`` (``threads``, ``transcript``,
``thread_state``, ``history``, ``diff``, ``compat_report``, ``usage``, ``search``, ``info``);
``erase``, ``export``, ``prune``, ``migrate`` and ``rewind`` change stores with the explicit choices their commands ask for
(``plan_erase`` ... return a ``Plan`` first, ``execute(plan)`` runs it). Errors are
``SymfonicError`` subclasses carrying the command's exit code.
"""

from symfonic_cli.api.changes import erase, export, migrate, prune, rewind
from symfonic_cli.api.plans import Plan, execute, plan_erase, plan_export, plan_migrate, plan_prune, plan_rewind
from symfonic_cli.api.store import Record, Store, open_store
from symfonic_cli.changes.result import RunResult

__all__ = ["Plan", "Record", "RunResult", "Store", "erase", "execute", "export", "migrate", "open_store", "plan_erase",
           "plan_export", "plan_migrate", "plan_prune", "plan_rewind", "prune", "rewind"]
