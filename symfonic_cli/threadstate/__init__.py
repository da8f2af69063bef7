"""A thread's run state: what ran, what is due next, what it waits on (``thread show``, ``threads list --status``)."""
