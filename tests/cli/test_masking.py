"""Every secret form masked (issue #21 item 9): one masking rule (location.masked) for store list,
errors, receipts and --debug, checked on generated URLs and libpq key/value strings.

A secret is the password of a URL's userinfo, any setting whose name holds password, secret,
token, passphrase or credential (libpq's password and sslpassword, a URL option such as
tlsCertificateKeyFilePassword), an authMechanismProperties entry (AWS_SESSION_TOKEN:...) and a
server setting in libpq's options ('-c password=...').
"""

from __future__ import annotations

import json
import subprocess
import sys
from urllib.parse import quote, unquote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symfonic_cli.location import StoreLocation, masked, mask_url, scrub
from tests.support.cli import run

_BOUND = dict(derandomize=True, deadline=None, database=None, max_examples=300, suppress_health_check=list(HealthCheck))

# Secrets long enough never to occur by chance in the rest of the string; any printable text.
_SECRET = st.text(st.characters(codec="utf-8", categories=("L", "N", "P", "S"), exclude_characters="\x00"),
                  min_size=8, max_size=24).map(lambda s: "Z9" + s)
_NAME = st.sampled_from(["password", "sslpassword", "Password", "tlsCertificateKeyFilePassword", "client_secret", "api_token",
                         "AWS_SESSION_TOKEN", "sslkey_passphrase", "aws_credential"])


def _plain(secret: str) -> str:
    """The secret as an unquoted value: none of the separators a parser stops at."""
    return "".join(c for c in secret if not c.isspace() and c not in "'\\,&;=:@/?#%") or "Z9x"


def _conninfo_quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@st.composite
def _cases(draw):
    """(a store location as written, the secrets in it, a part that must stay visible)."""
    secret = draw(_SECRET)
    plain = _plain(secret)
    name = draw(_NAME)
    host = "db-" + draw(st.sampled_from(["alpha", "beta", "gamma"])) + ".internal"
    form = draw(st.sampled_from(["userinfo", "query", "properties", "pg-options-url", "conninfo", "conninfo-options", "conninfo-bare"]))
    if form == "userinfo":
        scheme = draw(st.sampled_from(["postgresql", "mongodb"]))
        return f"{scheme}://user:{quote(secret, safe='')}@{host}/agents", [secret], host
    if form == "query":
        return f"mongodb://{host}/agents?tls=true&{name}={quote(secret, safe='')}&appname=x", [secret], host
    if form == "properties":
        value = f"SERVICE_NAME:svc,{name.upper()}:{plain}"
        return f"mongodb://{host}/agents?authMechanism=MONGODB-AWS&authMechanismProperties={quote(value, safe=':,')}", [plain], "SERVICE_NAME:svc"
    if form == "pg-options-url":
        opts = f"-c {name}={plain} -c statement_timeout=5s"
        return f"postgresql://user@{host}/agents?options={quote(opts, safe='')}", [plain], "statement_timeout"
    if form == "conninfo":
        key = draw(st.sampled_from(["password", "sslpassword"]))
        return f"host={host} dbname=agents {key}={_conninfo_quoted(secret)} user=support", [secret], "user=support"
    if form == "conninfo-options":
        inner = f"-c {name}={plain} -c x=1"
        return f"host={host} options={_conninfo_quoted(inner)} dbname=agents", [plain], "dbname=agents"
    return f"host={host} password={plain} sslpassword={plain[::-1]}", [plain, plain[::-1]], host


def _forms(secret: str) -> set[str]:
    return {secret, quote(secret, safe=""), unquote(secret)} - {""}


@settings(**_BOUND)
@given(_cases())
def test_generated_locations_show_no_secret(case):
    url, secrets, visible = case
    shown, hidden = masked(url)
    assert visible in shown, shown
    assert "***" in shown
    for secret in secrets:
        for form in _forms(secret):
            assert form not in shown, (url, shown)
    # A driver's message echoing the location or the bare secret is scrubbed too.
    location = StoreLocation("postgres", url, None, None, {})
    text = scrub(f"connection to {url} failed: bad value {secrets[0]!r} ({quote(secrets[0], safe='')})", location)
    for secret in secrets:
        for form in _forms(secret):
            assert form not in text, text


def test_named_forms():
    cases = {
        "mongodb://h/db?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:tok-1,SERVICE_NAME:s":
            "mongodb://h/db?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:***,SERVICE_NAME:s",
        "host=h options='-c password=pw-1' dbname=d": "host=h options='-c password=***' dbname=d",
        "host=h sslkey=/k.pem sslpassword=kp-1": "host=h sslkey=/k.pem sslpassword=***",
        "postgresql://u@h/d?sslpassword=kp-1&options=-c%20password%3Dpw-1":
            "postgresql://u@h/d?sslpassword=***&options=-c%20password%3D***",
        "mongodb://h/d?tlsCertificateKeyFilePassword=kp-1": "mongodb://h/d?tlsCertificateKeyFilePassword=***",
        "postgresql://u:pw-1@h/d": "postgresql://u:***@h/d",
        "./tokens.db": "./tokens.db",
    }
    for url, want in cases.items():
        assert mask_url(url) == want, url


_URLS = [
    ("mongodb://127.0.0.1:9/agents?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:tok-S3CRET", "tok-S3CRET"),
    ("postgresql://support@127.0.0.1:9/agents?options=-c%20password%3Dpw-S3CRET", "pw-S3CRET"),
    ("host=127.0.0.1 port=9 dbname=agents options='-c password=pw-S3CRET' sslpassword=kp-S3CRET", "S3CRET"),
]


def test_store_list_masks_every_form(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("".join(f"[stores.s{i}]\nurl = {json.dumps(url)}\n" for i, (url, _) in enumerate(_URLS)))
    for fmt in ("table", "text", "json", "jsonl"):
        r = run("store", "list", "--format", fmt, env={"SYMFONIC_CONFIG": str(config)})
        assert r.code == 0, r.err
        assert "S3CRET" not in r.out + r.err and r.out.count("***") >= 3, r.out


def test_errors_and_debug_mask_every_form(tmp_path):
    """The real binary, a store that cannot be reached: the error line and --debug's traceback."""
    for url, secret in _URLS:
        for debug in ([], ["--debug"]):
            proc = subprocess.run([sys.executable, "-m", "symfonic_cli", *debug, "--connect-timeout", "1", "threads", "list", "--store", url],
                                  capture_output=True, text=True, timeout=120)
            assert proc.returncode != 0
            assert secret not in proc.stdout + proc.stderr, proc.stderr
            if not debug:
                assert proc.returncode == 4 and proc.stderr.startswith("symfonic: error: ") and proc.stderr.count("\n") == 1, proc.stderr


def test_receipts_and_plans_mask_every_form(request, tmp_path):
    """A real erase through a location whose options set a server setting named like a secret
    (PostgreSQL accepts a dotted custom setting): the plan, the receipt on stdout and the receipt
    file show it as ***."""
    from tests.conftest import backend_for

    backend = backend_for("postgres", request)
    url = backend.new_store()
    secret = "kp-S3CRET-4711"
    with_secret = url + ("&" if "?" in url else "?") + f"options=-c%20symfonic.password%3D{secret}"
    audit = tmp_path / "audit.jsonl"
    for fmt in ("text", "json"):
        r = run("thread", "erase", "--store", with_secret, "--thread", "globex:_:s-100", "--yes", "--receipt", str(audit), "--format", fmt)
        assert r.code == 0, r.err
        assert secret not in r.out + r.err and "symfonic.password%3D***" in r.out + audit.read_text()
    assert secret not in audit.read_text()
