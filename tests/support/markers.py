"""pytest plugin: the suite's markers, put on each test by what it uses, so a new test gets them
without being told (``-m "not slow and not pty"`` is the edit-test loop; README "Tests").

- ``postgres`` / ``mongodb``: the test reaches that server: through its backend fixture, a kind
  parameter (``"postgres"``, ``"postgres-icu"``, a pair of kinds, ...), a module named for it, or
  a ``backend_for("postgres", ...)`` written in the test or in a fixture or helper of its module.
- ``pty``: the test runs the command on a pseudo-terminal (``on_terminal``, ``pty``).
- ``corpus``: the test uses the hostile-store corpus (``tests/support/hostile.py``).
- ``slow``: the test starts processes of its own (the command as a subprocess, ``subprocess.run``
  and its kin, a terminal, a fixture in ``SLOW_FIXTURES``), is property-based (hypothesis), or its
  module or test is named in ``SLOW`` (measured with ``--durations``). A test of the quick loop
  that starts a process anyway fails (``pytest_runtest_call``): the rules are extended, not a list.

Rules look at names, never at file paths, so a test module moved to ``tests/<feature>/`` keeps
its marks. A test that reaches a server or a terminal without its mark fails (``require``): the
rules cannot silently miss one, and ``-m "not postgres"`` never starts PostgreSQL.
"""

from __future__ import annotations

import ast
import inspect
from functools import lru_cache

import pytest

MARKERS = ("postgres", "mongodb", "pty", "slow", "corpus")
KINDS = ("postgres", "mongodb")
FIXTURES = {"postgres_backend": "postgres", "mongodb_backend": "mongodb", "pg_standby": "postgres"}
# Called in a test (or a helper or fixture of its module): the mark it needs.
CALLS = {"on_terminal": ("pty", "slow"), "Session": ("pty", "slow"), "lines_on_terminal": ("pty", "slow"), "run_on_pty": ("pty", "slow"), "screen_of": ("pty", "slow"), "openpty": ("pty", "slow"), "run_process": ("slow",), "imports_of": ("slow",), "http_server": ("slow",), "_pty_run": ("pty", "slow"), "Popen": ("slow",),
         "StdioServerParameters": ("slow",), **{f"subprocess.{f}": ("slow",) for f in ("run", "call", "check_call", "check_output")},
         "os.fork": ("slow",), "os.system": ("slow",)}
# Fixtures that start processes of their own (the run-state stores SIGKILL writers mid-step).
SLOW_FIXTURES = {"run_state_stores", "state_stores", "pg_standby"}  # pg_standby: a second cluster
# Measured slow (--durations; many store kinds, pairs or generated cases each): module names and
# test names (module::test). Property-based tests (hypothesis) are slow by rule.
SLOW = {
    "modules": {"test_terminal_speed", "test_man_page", "test_prune_pieces", "test_replica_lag"},
    "tests": {
        "test_migrate::test_copy_every_pair_verifies_and_reads_back_the_same",
        "test_hostile::test_crafted_envelopes_on_every_kind",
        "test_hostile::test_long_integers_in_jsonb",
        "test_hostile::test_non_finite_numbers_and_long_integers_are_values",
        "test_hostile::test_json_checkpoint_with_lone_surrogate_and_deep_blocks",
        "test_hostile::test_mongodb_documents_of_unexpected_shape",
        "test_timestamps::test_every_store_kind_matches_its_own_saver",
        "test_timestamps::test_history_shapes_match_the_reference",
        "test_timestamps::test_symfonic_core_get_transcript_agrees",
        "test_transcript::test_timestamps_match_symfonic_core",
        "test_history::test_hostile_write_names_are_escaped_and_exact",
        "test_mongodb::test_same_output_as_sqlite",
        "test_mongodb::test_inspecting_commands_send_only_read_commands",
        "test_mongodb::test_identical_stores_give_byte_identical_output",
        "test_postgres::test_same_transcripts_as_sqlite",
        "test_retention_stream::test_export_in_batches_equals_one_page",
        "test_erase_trust::test_look_alike_keys_never_print_the_same",
        "test_erase_trust::test_listed_keys_round_trip_exactly",
        "test_status_tail::test_status_of_threads_whose_trailing_fields_are_long",
        "test_postgres_status_collations::test_status_listing_is_exact_under_every_collation",
        "test_listing::test_record_encoder_writes_what_json_dumps_writes",
        # Measured on 2026-12-02 (--durations=0, the edit-test loop's slowest: >= 1.2 s a function):
        "test_search_delta::test_search_on_delta_stores_plain_and_encrypted",  # 2026-12-03: ~15 s a kind
        "test_browse_encrypted_delta::test_every_screen_on_delta_and_encrypted_stores",  # 2026-12-03: ~10 s a case
        "test_browse_app::test_the_note_and_the_keys_fit_on_every_screen",  # 2026-12-03: ~8 s a size
        "test_activity_instant::test_listing_by_instant",
        "test_activity_instant::test_status_listing_by_instant",
        "test_activity_instant::test_sweep_erases_by_instant",
        "test_activity_instant::test_the_recheck_decides_by_instant",
        "test_delta_channel::test_transcript_is_what_get_state_rebuilds",
        "test_docs::test_cli_reference_and_man_page_are_current",
        "test_docs::test_guide_runs_as_written",
        "test_docs::test_readme_tour_runs_as_written",
        "test_encrypted::test_with_the_key_every_command_gives_what_the_plain_store_gives",
        "test_erase_exact::test_tenant_selections_are_exact_on_every_store",
        "test_erase_receipts::test_the_end_record_carries_the_end_time",
        "test_export::test_hostile_keys_give_safe_unique_names",
        "test_export::test_zip_and_tar_gz_unpack_to_the_same_files_with_tools_and_state",
        "test_history::test_diff_is_a_python_diff_of_the_states",
        "test_history::test_history_is_the_savers_list",
        "test_hostile_labels::test_changing_commands_escape_too",
        "test_hostile_labels::test_every_label_escaped_on_a_pipe",
        "test_masking::test_errors_and_debug_mask_every_form",
        "test_migrate_encrypted_delta::test_migrate_an_encrypted_store",
        "test_migrate_encrypted_delta::test_migrate_delta_threads",
        "test_migrate_identity::test_a_checkpoint_stored_under_another_id_than_its_blobs_is_failed_and_nothing_replaced",
        "test_mongodb::test_authentication",
        "test_mongodb::test_migrate_into_a_new_database",
        "test_mongodb_trust::test_a_standalone_target_inserts_only_too",
        "test_mongodb_trust::test_every_command_keeps_case_twins_apart_under_a_case_insensitive_default_collation",
        "test_postgres::test_host_that_does_not_answer_times_out",
        "test_prune::test_latest_state_is_what_langgraph_reads_before_and_after",
        "test_prune_cli::test_usage_predicts_what_prune_removes_on_servers",
        "test_python_api::test_prune_equals_thread_prune",
        "test_python_api::test_thread_state_history_and_diff_equal_the_commands",
        "test_python_api::test_threads_equal_the_listing",
        "test_python_api::test_usage_and_search_equal_the_commands",
        "test_retention_stream::test_batches_erase_exactly_the_idle_threads",
        "test_retention_stream::test_pages_in_every_encoding_and_collation",
        "test_search::test_folding_and_planted_phrases",
        "test_search::test_search_finds_exactly_what_decoding_every_thread_finds",
        "test_thread_show::test_scenario_threads_match_get_state",
        "test_transcript_tools::test_a_store_with_odd_tool_calls_shows_them_raw_with_a_warning",
        # Measured again on 2026-12-02 after the suite had grown to 1,429 tests (the edit-test
        # loop's functions of >= 0.55 s in all):
        "test_activity_instant::test_the_rewritten_ids_are_what_the_store_holds",
        "test_compat::test_store_wide_counts_by_line_and_version",
        "test_compat::test_the_grace_window_reads_each_id_by_its_time",
        "test_compat::test_verdicts_when_only_newer_or_only_readable",
        "test_compat_releases::test_checkpoints_and_threads_per_release",
        "test_completion_install::test_install_into_bash_completes_values_and_store_names",
        "test_completion_keys::test_a_real_bash_completes_a_key_at_the_terminal",
        "test_delta_channel::test_export_holds_the_rebuilt_transcript",
        "test_delta_channel::test_history_counts_and_rewrites_match_get_state_history",
        "test_delta_channel::test_thread_show_and_diff",
        "test_delta_channel::test_transcript_by_ordinal_and_time_range",
        "test_docs::test_readme_python_example_runs",
        "test_encrypted::test_erase_needs_no_key",
        "test_encrypted::test_plaintext_values_in_an_encrypted_store_are_a_finding",
        "test_encrypted::test_the_key_is_in_no_receipt_manifest_or_progress",
        "test_encrypted::test_the_store_is_really_encrypted",
        "test_environment::test_nothing_else_names_sys_stdout_sys_stderr_or_print",
        "test_erase::test_batch_from_file",
        "test_erase::test_cascade_into_declared_extra_tables",
        "test_erase::test_single_thread_erased_others_untouched",
        "test_erase::test_whole_tenant_and_sub_tenant",
        "test_erase_exact::test_postgres_prefix_uses_the_index_where_the_range_is_exact",
        "test_erase_pg_batched::test_erase_verified_leaves_a_thread_active_since_the_cut_off_whole",
        "test_erase_receipts::test_a_confirmed_erase_prints_a_summary_and_the_receipt_path",
        "test_erase_receipts::test_suggestions_never_reach_the_receipt_or_stdout",
        "test_erase_triggers::test_postgres_triggers_and_rules_on_erased_tables_are_refused",
        "test_erase_trust::test_rerun_with_the_receipt_file_is_already_erased",
        "test_export::test_directory_bundle_equals_transcript_show_and_store_unchanged",
        "test_hostile_inputs::test_a_libpq_key_value_string_is_a_postgres_location",
        "test_hostile_inputs::test_invalid_mongodb_url_options_are_exit_2_with_pymongos_reason",
        "test_hostile_inputs::test_nan_copies_verify_and_a_rerun_is_no_conflict",
        "test_migrate::test_cross_kind_copy_into_postgres_holds_what_the_saver_itself_writes",
        "test_plans_fit::test_an_undatable_thread_is_counted_and_never_swept",
        "test_postgres_status_collations::test_status_listing_never_sorts_every_checkpoint",
        "test_prune::test_keep_1_leaves_exactly_what_postgres_saver_prune_leaves",
        "test_prune_cli::test_all_prunes_threads_whose_activity_cannot_be_dated",
        "test_python_api::test_erase_equals_thread_erase",
        "test_python_api::test_migrate_equals_migrate",
        "test_python_api::test_transcript_equals_transcript_show",
        "test_retention::test_sweep_erases_exactly_the_idle_threads",
        "test_retention::test_thread_written_during_the_sweep_is_skipped_active",
        "test_retention_stream::test_jsonl_gives_the_receipt_records_and_the_plan_is_counted",
        "test_search::test_filters_limit_and_nothing_found",
        "test_search::test_rows_are_the_transcripts_rows",
        "test_search::test_the_store_narrows_before_decoding",
        "test_session_selection::test_a_repeated_thread_option_selects_every_key_or_is_refused",
        "test_session_selection::test_a_session_matching_nothing_is_not_found",
        "test_session_selection::test_erase_plans_list_every_match_as_a_key_file_would",
        "test_session_selection::test_export_takes_the_session_across_tenants",
        "test_timestamps::test_append_only_thread_decodes_nothing_but_the_latest",
        "test_timestamps::test_plain_thread_needs_no_langgraph_on_sql_stores",
        "test_upstream_contract::test_values_without_objects_decode_as_the_serializer_decodes_them",
        "test_vocabulary::test_no_word_set_is_spelled_out_again",
    },
}

_current: list[pytest.Item] = []


def pytest_configure(config) -> None:
    # The markers are registered in pyproject.toml (--strict-markers): one missing there stops the run.
    registered = {line.partition(":")[0].strip() for line in config.getini("markers")}
    missing = sorted(set(MARKERS) - registered)
    if missing:
        raise pytest.UsageError(f"markers not registered in pyproject.toml [tool.pytest.ini_options]: {', '.join(missing)}")


def _kind_of(value) -> set[str]:
    if isinstance(value, str):
        return {k for k in KINDS if value == k or value.startswith(k + "-") or value.startswith(k + "_")}
    if isinstance(value, (tuple, list)):
        return set().union(*(_kind_of(v) for v in value)) if value else set()
    return set()


@lru_cache(maxsize=None)
def _module_tree(module) -> dict[str, ast.AST]:
    """Module-level functions (and fixtures) of ``module`` by name."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError, SyntaxError):
        return {}
    out: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{node.name}.{sub.name}"] = sub
    return out


@lru_cache(maxsize=None)  # per function node: parametrized tests ask again for each case
def _called_names(node: ast.AST) -> tuple[frozenset[str], frozenset[str]]:
    """(names called in ``node``, kinds named as the first argument of backend_for/backends.get)."""
    names, kinds = set(), set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name:
                names.add(name)
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                names.add(f"{f.value.id}.{f.attr}")  # subprocess.run, not any run
            if name in ("backend_for", "get", "getfixturevalue") and sub.args and isinstance(sub.args[0], ast.Constant):
                arg = sub.args[0].value
                if isinstance(arg, str):
                    kinds |= _kind_of(arg)
                    if arg in FIXTURES:
                        kinds.add(FIXTURES[arg])
    return frozenset(names), frozenset(kinds)


def _reach(module, start: list[str]) -> tuple[set[str], set[str]]:
    """Everything called from ``start`` and, transitively, from the module's own functions it calls."""
    tree = _module_tree(module)
    seen, todo, names, kinds = set(), list(start), set(), set()
    while todo:
        name = todo.pop()
        if name in seen or name not in tree:
            continue
        seen.add(name)
        called, named = _called_names(tree[name])
        names |= called
        kinds |= named
        todo.extend(called)
    return names, kinds


def marks_for(item) -> set[str]:
    marks: set[str] = set()
    module = getattr(item, "module", None)
    modname = (module.__name__ if module else "").rpartition(".")[2]
    for kind in KINDS:
        if kind in modname or (kind == "mongodb" and "mongo" in modname):
            marks.add(kind)
    if "terminal" in modname:
        marks.add("pty")
    for fixture in getattr(item, "fixturenames", ()):
        if fixture in FIXTURES:
            marks.add(FIXTURES[fixture])
        if fixture in SLOW_FIXTURES:
            marks.add("slow")
    if getattr(getattr(item, "function", None), "is_hypothesis_test", False):
        marks.add("slow")
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        for value in callspec.params.values():
            marks |= _kind_of(value)
    if module is not None:
        fn = getattr(item, "originalname", None) or item.name.partition("[")[0]
        start = [fn, f"{item.cls.__name__}.{fn}" if getattr(item, "cls", None) else fn]
        start += [f for f in getattr(item, "fixturenames", ()) if f in _module_tree(module)]
        names, kinds = _reach(module, start)
        marks |= kinds
        for name in names:
            marks.update(CALLS.get(name, ()))
        if any(getattr(v, "__module__", None) == "tests.support.hostile" or getattr(v, "__name__", None) == "tests.support.hostile"
               for v in vars(module).values()):
            marks.add("corpus")
        if modname in SLOW["modules"] or f"{modname}::{fn}" in SLOW["tests"]:
            marks.add("slow")
    if "pty" in marks:
        marks.add("slow")
    return marks


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        for name in sorted(marks_for(item)):
            if item.get_closest_marker(name) is None:
                item.add_marker(name)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _current.append(item)
    try:
        yield
    finally:
        _current.pop()


QUICK_LOOP_OUT = ("slow", "pty", "postgres", "mongodb")  # what -m "not ..." leaves out of the quick loop


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """A test of the quick loop (none of QUICK_LOOP_OUT) that starts a process fails: what starts
    one is ``slow`` by these rules, never by a list (the servers' own fixtures start theirs before
    the call, outside this check)."""
    if any(item.get_closest_marker(m) is not None for m in QUICK_LOOP_OUT):
        yield
        return
    import os
    import subprocess

    def refused(real):
        def start(*args, **kwargs):
            require("slow")
            return real(*args, **kwargs)
        return start

    saved = [(subprocess.Popen, "_execute_child"), (os, "fork"), (os, "forkpty"), (os, "posix_spawn"), (os, "posix_spawnp")]
    saved = [(owner, name, getattr(owner, name)) for owner, name in saved if hasattr(owner, name)]
    for owner, name, real in saved:
        setattr(owner, name, refused(real))
    try:
        yield
    finally:
        for owner, name, real in saved:
            setattr(owner, name, real)


def require(mark: str) -> None:
    """Fail the running test unless it carries ``mark`` (called where a server or terminal is reached)."""
    if _current and _current[-1].get_closest_marker(mark) is None:
        pytest.fail(
            f"{_current[-1].nodeid} reaches what the '{mark}' marker stands for but is not marked: "
            "extend the rules in tests/support/markers.py (or mark it)",
            pytrace=False,
        )
