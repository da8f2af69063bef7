"""Test support shared by the suite and the benchmarks: runners, backends, scenarios, servers, oracles."""
