"""``symfonic thread history`` and ``symfonic thread diff``: a thread's checkpoints and what changed between two."""
