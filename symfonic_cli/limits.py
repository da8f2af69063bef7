"""Limits every command and the Python API share, in a module that imports nothing (``--help``
reads them too)."""

# Stored integers are values up to this many digits (README "Limits"), printed in full.
MAX_INT_DIGITS = 20_000

DEFAULT_CONNECT_TIMEOUT = 10.0
MIN_CONNECT_TIMEOUT = 0.1
MAX_CONNECT_TIMEOUT = 3600.0
# The documented range of every numeric option (README "Numeric options"); out of range, nan,
# inf and overflow are usage errors naming the range, on both routes and in the API.
# --lock-timeout (thread erase, thread prune): how long one statement waits for a lock, in seconds.
DEFAULT_LOCK_TIMEOUT = 5.0
MIN_LOCK_TIMEOUT = 0.01
MAX_LOCK_TIMEOUT = 3600.0
# --piece-size (thread prune): checkpoints one transaction deletes at most; a huge thread goes in pieces.
DEFAULT_PIECE = 500
MAX_PIECE = 1_000_000
MAX_RATE = 1_000_000.0  # --max-rate: threads per second, more than 0
MAX_COUNT = 1_000_000_000  # --limit; --index from -MAX_COUNT to MAX_COUNT
MAX_JOBS = 64
MAX_BATCH = 100_000  # --batch-size (thread erase/export sweeps), from 1
MAX_FORMAT_VERSION = 1_000_000
# Cells of a search hit's snippet in JSON, JSONL and text (no terminal to fit).
JSON_SNIPPET = 100


def connect_timeout_in_range(value: float) -> bool:
    """Finite and within the documented range (nan compares false to everything)."""
    return MIN_CONNECT_TIMEOUT <= value <= MAX_CONNECT_TIMEOUT


def connect_timeout_range() -> str:
    return f"{MIN_CONNECT_TIMEOUT}<=x<={MAX_CONNECT_TIMEOUT}"  # click's own wording for a range


def lock_timeout_in_range(value: float) -> bool:
    """Finite and within the documented range (nan compares false to everything)."""
    return MIN_LOCK_TIMEOUT <= value <= MAX_LOCK_TIMEOUT


def lock_timeout_range() -> str:
    return f"{MIN_LOCK_TIMEOUT}<=x<={MAX_LOCK_TIMEOUT}"  # click's own wording for a range
