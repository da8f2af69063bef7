"""The envelope contract (symfonic_cli.compat.envelope), rule by rule, and the envelope saver wrapper."""

from __future__ import annotations

import pytest

from symfonic_cli.compat.envelope import (
    CheckpointFormatError,
    StateEnvelope,
    boolean_anomalies,
    decode_envelope,
    describe_compatibility,
)
from tests.support.envelope_saver import NO_ENVELOPE, EnvelopeSaver, migrated

K = "symfonic_envelope"


@pytest.mark.parametrize("metadata", [None, {}, {"step": 3, "source": "loop"}])
def test_no_envelope_is_legacy_format_zero(metadata):
    env = decode_envelope(metadata)
    assert (env.format_version, env.writer_line, env.safe_boundary, env.finalized) == (0, "legacy", False, None)


@pytest.mark.parametrize("value", ["v1", [1], None, 7, True])
def test_value_not_a_mapping_is_corrupt(value):
    with pytest.raises(CheckpointFormatError) as exc:
        decode_envelope({K: value})
    assert exc.value.message == "'symfonic_envelope' is not a mapping; the envelope is corrupt"


@pytest.mark.parametrize("version", ["1", True, False, 0, -1, 1.0, 1.5, None, [1]])
def test_unusable_format_version(version):
    with pytest.raises(CheckpointFormatError) as exc:
        decode_envelope({K: migrated(format_version=version)})
    assert exc.value.message == f"envelope carries no usable format_version ({version!r})"


def test_missing_format_version():
    env = migrated()
    del env["format_version"]
    with pytest.raises(CheckpointFormatError, match=r"no usable format_version \(None\)"):
        decode_envelope({K: env})


def test_newer_format_is_refused_and_current_format_moves_the_line():
    with pytest.raises(CheckpointFormatError) as exc:
        decode_envelope({K: migrated(format_version=2)})
    assert exc.value.newer
    assert exc.value.message == "envelope format_version 2 is newer than this package understands (1); refusing to resume"
    assert decode_envelope({K: migrated(format_version=2)}, current_format=2).format_version == 2


def test_writer_line_must_be_known():
    with pytest.raises(CheckpointFormatError) as exc:
        decode_envelope({K: migrated(writer_line="beta")})
    assert "'beta'" in exc.value.message and "'legacy'" in exc.value.message and "'migrated'" in exc.value.message


def test_untyped_sequence_and_finalized_read_as_absent_never_coerced():
    env = decode_envelope({K: migrated(boundary_sequence="3", finalized="false")})
    assert env.boundary_sequence is None and env.finalized is None
    env = decode_envelope({K: migrated(boundary_sequence=True, finalized=0)})
    assert env.boundary_sequence is None and env.finalized is None
    env = decode_envelope({K: migrated(boundary_sequence=4, finalized=False)})
    assert env.boundary_sequence == 4 and env.finalized is False


@pytest.mark.parametrize("value, read", [(True, True), (False, False), ("false", True), ("", False), (0, False), (1, True)])
def test_safe_boundary_reads_as_bool_of_value(value, read):
    assert decode_envelope({K: migrated(safe_boundary=value)}).safe_boundary is read
    anomalies = boolean_anomalies({K: migrated(safe_boundary=value)})
    if isinstance(value, bool):
        assert anomalies == []
    else:
        assert anomalies == [f"safe_boundary is {value!r} ({'string' if isinstance(value, str) else 'integer'}), read as {read}"]


def test_metadata_form_has_exactly_seven_keys():
    env = StateEnvelope(format_version=1, writer_line="migrated")
    assert list(env.to_metadata()) == [
        "format_version", "writer_line", "package_version", "safe_boundary", "boundary_id", "boundary_sequence", "finalized"
    ]
    assert decode_envelope({K: env.to_metadata()}) == env


def test_describe_legacy_and_migrated():
    legacy = describe_compatibility({})
    assert (legacy.direction, legacy.writer_line, legacy.format_version) == ("legacy->migrated", "legacy", 0)
    assert legacy.readable_by_legacy and legacy.readable_by_migrated
    assert legacy.reason == "no envelope; migrated readers treat absent provenance as legacy"
    legacy_env = describe_compatibility({K: migrated(writer_line="legacy")})
    assert (legacy_env.direction, legacy_env.format_version) == ("legacy->migrated", 1)
    mig = describe_compatibility({K: migrated()})
    assert (mig.direction, mig.writer_line, mig.format_version) == ("migrated->legacy", "migrated", 1)
    assert mig.readable_by_legacy and mig.readable_by_migrated
    assert mig.reason == "envelope is additive under 'symfonic_envelope'; every legacy field is unchanged"


def test_describe_reports_decoding_errors_instead_of_raising():
    corrupt = describe_compatibility({K: "v1"})
    assert not corrupt.readable_by_migrated and corrupt.readable_by_legacy
    assert corrupt.reason.endswith("the envelope is corrupt")
    newer = describe_compatibility({K: migrated(format_version=3)})
    assert newer.format_version == 3 and not newer.readable_by_migrated and not newer.readable_by_legacy


def test_custom_key():
    assert decode_envelope({"prov": migrated()}, key="prov").writer_line == "migrated"
    assert decode_envelope({"prov": migrated()}).writer_line == "legacy"


def test_long_values_are_quoted_short():
    with pytest.raises(CheckpointFormatError) as exc:
        decode_envelope({K: migrated(writer_line="x" * 5000)})
    assert len(exc.value.message) < 200


def test_envelope_saver_merges_into_metadata_through_the_real_saver(any_kind):
    from langchain_core.messages import HumanMessage

    from tests.support.scenarios import agent_graph

    url = any_kind.new_store(scenarios=False)
    with any_kind.saver(url) as inner:
        saver = EnvelopeSaver(inner)
        graph = agent_graph().compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": "t:_:1"}}
        saver.envelope = NO_ENVELOPE
        graph.invoke({"messages": [HumanMessage(content="one")]}, cfg)
        saver.envelope = migrated(safe_boundary="false", boundary_sequence=2)
        graph.invoke({"messages": [HumanMessage(content="two")]}, cfg)
        tuples = list(inner.list(cfg))
    envs = [t.metadata.get(K) for t in tuples]  # newest first
    assert envs[0] == migrated(safe_boundary="false", boundary_sequence=2)
    assert envs[-1] is None
    assert all(t.metadata.get("source") in ("input", "loop") for t in tuples)
