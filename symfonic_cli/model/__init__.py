"""Row types only: what the stores return and the commands pass around. No I/O."""
