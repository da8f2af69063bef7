"""Values encrypted at rest by LangGraph's ``EncryptedSerializer``: the key and the decryption.

``EncryptedSerializer.from_pycryptodome_aes()`` stores the type ``"<inner>+aes"`` (``msgpack+aes``)
and the bytes ``nonce(16) || tag(16) || ciphertext``, AES in EAX mode. The key is taken as the
application gives it: ``LANGGRAPH_AES_KEY`` (its raw bytes, 16, 24 or 32 of them) or a key file
(``--aes-key-file``, ``SYMFONIC_AES_KEY_FILE``) holding the raw key bytes. No message written
here holds the key or any part of it. pycryptodome is imported only when a value is decrypted.
"""

from __future__ import annotations

import os

from symfonic_cli.errors import StoreError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeGuard

KEY_ENV = "LANGGRAPH_AES_KEY"
KEY_FILE_ENV = "SYMFONIC_AES_KEY_FILE"
KEY_HINT = "give the key with LANGGRAPH_AES_KEY or --aes-key-file PATH"
EXTRA_HINT = "pip install 'symfonic[encrypted]'"
NAME = "LangGraph EncryptedSerializer, AES"
_LENGTHS = (16, 24, 32)

_key_file: str | None = None
_file_key: bytes | None = None
_encrypt_target = False  # migrate: the target is written with EncryptedSerializer and this key


def configure(key_file: str | None) -> None:
    """This run's ``--aes-key-file`` (None: none given). The file is read and checked now: a
    missing or unreadable file, one that group or others may access, or a key of the wrong
    length is a usage error (exit 2), before any store is opened."""
    global _key_file, _file_key, _encrypt_target
    _key_file, _file_key, _encrypt_target = None, None, False
    if key_file is None or key_file == "":
        return
    import stat

    try:
        st = os.stat(key_file)
    except OSError as exc:
        raise UsageError(f"--aes-key-file {key_file}: {exc.strerror or 'cannot be read'}") from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"--aes-key-file {key_file}: not a regular file")
    if st.st_mode & 0o077:
        raise UsageError(
            f"--aes-key-file {key_file}: group or others may access it (mode {stat.S_IMODE(st.st_mode):04o})",
            hint=f"chmod 600 {key_file}, as ssh requires of a private key",
        )
    try:
        with open(key_file, "rb") as fh:
            key = fh.read(65)
    except OSError as exc:
        raise UsageError(f"--aes-key-file {key_file}: {exc.strerror or 'cannot be read'}") from None
    if len(key) not in _LENGTHS and len(key) - 1 in _LENGTHS and key.endswith(b"\n"):
        key = key[:-1]  # a key written with echo: the newline cannot be part of a valid key
    if len(key) not in _LENGTHS:
        raise UsageError(f"--aes-key-file {key_file}: the key must be 16, 24 or 32 bytes (the file holds {min(len(key), 64)}{'+' if len(key) > 64 else ''})")
    _key_file, _file_key = key_file, key


def key() -> bytes | None:
    """The key of this run: the key file's, else ``LANGGRAPH_AES_KEY``'s bytes; None when neither."""
    if _file_key is not None:
        return _file_key
    text = os.environ.get(KEY_ENV)
    if text is None or text == "":
        return None
    raw = os.fsencode(text)  # the bytes the variable holds (LangGraph: key_str.encode())
    if len(raw) not in _LENGTHS:
        raise UsageError(f"{KEY_ENV} must be 16, 24 or 32 bytes long (it holds {len(raw)})")
    return raw


def is_encrypted(type_: object) -> TypeGuard[str]:
    return isinstance(type_, str) and "+" in type_


def decrypt(type_: str | None, data: bytes | None, *, what: str) -> tuple[str | None, bytes | None]:
    """``(inner type, plaintext)`` of an encrypted ``(type, bytes)`` pair; any other pair as it is."""
    if not is_encrypted(type_):
        return type_, data
    inner, ciphername = type_.split("+", 1)
    if ciphername != "aes":
        raise StoreError(f"{what} is encrypted with an unknown cipher {ciphername!r} (type {type_!r})")
    k = key()
    if k is None:
        raise StoreError(f"{what} is encrypted ({NAME}); {KEY_HINT}")
    aes = _aes()
    data = bytes(data or b"")
    if len(data) < 32:
        raise StoreError(f"{what} is encrypted but holds {len(data)} bytes, too few for a nonce and a tag")
    try:
        plain = aes.new(k, aes.MODE_EAX, nonce=data[:16]).decrypt_and_verify(data[32:], data[16:32])
    except (ValueError, KeyError):
        raise StoreError(f"the key does not decrypt {what} (authentication failed)") from None
    return inner, plain


def _aes():
    try:
        from Crypto.Cipher import AES
    except ImportError:
        raise StoreError(f"the store is encrypted ({NAME}); reading it needs pycryptodome: {EXTRA_HINT}") from None
    return AES


def serializer():
    """The serializer an application with this run's key writes with (migrate's target), or None
    when no key is given."""
    k = key()
    if k is None:
        return None
    _aes()
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

    return EncryptedSerializer.from_pycryptodome_aes(key=k)


def set_target_encryption(on: bool) -> None:
    """migrate: write the target with EncryptedSerializer and this run's key (the source's)."""
    global _encrypt_target
    _encrypt_target = bool(on)


def target_encrypts() -> bool:
    return _encrypt_target


def state() -> tuple[str | None, bool]:
    """What a spawned migrate worker needs to decrypt and encrypt as this process does."""
    return _key_file, _encrypt_target


def restore(saved: tuple[str | None, bool]) -> None:
    configure(saved[0])
    set_target_encryption(saved[1])
