"""``symfonic threads search``: the threads whose conversation holds a text (see search.run.search)."""
