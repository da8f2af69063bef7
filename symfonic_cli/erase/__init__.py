"""thread erase: the request driver (run.py) and the retention sweep (sweep.py), over changes/."""
