"""thread erase: the plan, the receipt (plan.py) and the run (run.py)."""
