"""The latest root checkpoint's ``messages`` as the application reads them (``aget_tuple``), and
where symfonic-core 9.12 itself reads none: its ``get_transcript`` and restart-resume take the
latest checkpoint's ``channel_values["messages"]`` as a list of messages, through a serializer
without a cipher (``symfonic/agent/checkpointer/serde.py``: a JsonPlusSerializer)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from symfonic_cli.errors import StoreError

if TYPE_CHECKING:
    from symfonic_cli.stores.protocol import Store
    from symfonic_cli.transcript.read import TranscriptResult

# Why the application reads no messages for a thread whose messages this tool does show.
DELTA_ABSENT = ("its messages are delta-encoded (a LangGraph DeltaChannel) and its latest checkpoint holds no 'messages' value: "
                "symfonic-core's get_transcript returns no rows and its restart-resume recalls nothing")
DELTA_SNAPSHOT = ("its messages are delta-encoded (a LangGraph DeltaChannel) and its latest checkpoint holds a snapshot, "
                  "not a list: symfonic-core's get_transcript returns one empty row of role 'other' and its restart-resume "
                  "recalls nothing")
ENCRYPTED = ("its messages are encrypted (EncryptedSerializer) and symfonic-core's checkpoint serializer has no cipher: "
             "its get_transcript fails and its restart-resume recalls nothing")


@dataclass
class LatestMessages:
    """``checkpoint_id`` None: no root checkpoint. ``unread``: why the application's own reads
    (get_transcript, restart-resume) get no messages from it (None: they read ``messages``)."""

    checkpoint_ns: str
    checkpoint_id: str | None
    messages: list[Any]
    unread: str | None = None
    warnings: list[str] = field(default_factory=list)


def latest_messages(store: Store, key: str) -> LatestMessages:
    """One checkpoint read: the stored fields when they are plain messages, else strictly decoded."""
    from symfonic_cli.transcript.read import _plain_messages, delta_state, is_delta

    plain = _plain_messages(store, key, None)
    if plain is not None:
        ns, cid, messages = plain
        return LatestMessages(ns, cid, list(messages))
    delta = delta_state(store, key, None)
    if delta is not None:
        return LatestMessages("", delta[0], [], DELTA_SNAPSHOT if delta[1] else DELTA_ABSENT)
    unread = ENCRYPTED if encrypted_messages(store, key) else None
    record = store.read_checkpoint(key, channels=("messages",))
    if record is None:
        return LatestMessages("", None, [])
    warnings = []
    if record.blocked:
        warnings.append("not decoded (class not on the safe list, shown from its raw fields): " + ", ".join(sorted(record.blocked)))
    messages = record.channel_values.get("messages")
    if is_delta(record):
        return LatestMessages(record.checkpoint_ns, record.checkpoint_id, [], DELTA_ABSENT if messages is None else DELTA_SNAPSHOT, warnings)
    if messages is None:
        messages = []
    if not isinstance(messages, list):
        raise StoreError(f"checkpoint {record.checkpoint_id}: 'messages' is not a list ({type(messages).__name__})")
    return LatestMessages(record.checkpoint_ns, record.checkpoint_id, messages, unread, warnings)


def encrypted_messages(store: Store, key: str) -> bool:
    """Whether the latest root checkpoint's messages are stored encrypted (the stored type, no decoding)."""
    from symfonic_cli.codec.cipher import is_encrypted

    state = store.read_message_state(key)
    if state is not None and state.encoding == "channel" and state.payload is None and state.version is not None:
        # PostgreSQL leaves a blob it does not read plainly to the strict path: its stored type, from the stream.
        state = next((s for s in store.iter_message_states(key) if s.checkpoint_ns == ""), None)
    return state is not None and is_encrypted(state.payload_type)


def application_unread(store: Store, key: str, *, delta: bool) -> str | None:
    """For ``transcript show``: why the application reads none of the messages shown (None: it
    reads them). ``delta``: the rows were rebuilt from a DeltaChannel."""
    from symfonic_cli.codec.cipher import key as aes_key
    from symfonic_cli.transcript.read import delta_state

    if delta:
        found = delta_state(store, key, None)
        if found is not None:
            return DELTA_SNAPSHOT if found[1] else DELTA_ABSENT
        record = store.read_checkpoint(key, channels=("messages",))
        return DELTA_ABSENT if record is None or record.channel_values.get("messages") is None else DELTA_SNAPSHOT
    if aes_key() is not None and encrypted_messages(store, key):  # without a key, an encrypted read stops first
        return ENCRYPTED
    return None


def with_application_note(store: Store, key: str, result: TranscriptResult, *, checkpoint_id: str | None) -> TranscriptResult:
    """``transcript show``'s rows (the command and ``Store.transcript`` alike), each carrying
    ``not_read_by_application`` when symfonic-core reads none of the thread's latest messages
    (``application_unread``); as of an older ``checkpoint_id`` the note does not apply (history)."""
    from dataclasses import replace

    if checkpoint_id is not None or not result.rows:
        return result
    unread = application_unread(store, key, delta=result.resolution.path == "delta")
    if unread is None:
        return result
    return replace(result, rows=[replace(r, not_read_by_application=unread) for r in result.rows])
