"""The changing operations' declared parameters (changes/params.py), for the command line's
options (cli/declared.py): the same declarations the API's keywords are built from."""

from symfonic_cli.erase.params import PARAMS as ERASE
from symfonic_cli.export.params import PARAMS as EXPORT
from symfonic_cli.migrate.params import PARAMS as MIGRATE
from symfonic_cli.prune.params import PARAMS as PRUNE
from symfonic_cli.rewind.params import PARAMS as REWIND

__all__ = ["ERASE", "EXPORT", "MIGRATE", "PRUNE", "REWIND"]
