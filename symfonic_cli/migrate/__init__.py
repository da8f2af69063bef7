"""migrate: the copy (copy.py), its comparison (compare.py) and workers (workers.py)."""
