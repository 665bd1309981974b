"""What the process knows to be secret, and what looks secret, is masked in text and logs."""

from __future__ import annotations

import logging
import secrets

import pytest
from typer.testing import CliRunner

from pawflow.cli import app
from pawflow.errors import ModelError
from pawflow.redaction import (
    MASK,
    RedactingFilter,
    redact,
    remember,
    remember_settings,
    remember_url,
)


def _secret(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(8)}"


def test_remembered_secrets_are_masked_wherever_they_appear() -> None:
    key = _secret("sk")
    remember(key)
    assert redact(f"Incorrect API key provided: {key}.") == f"Incorrect API key provided: {MASK}."
    assert redact(f"{key}{key}") == MASK + MASK
    # A bearer header remembers the credential alone too.
    credential = _secret("cred")
    remember(f"Bearer {credential}")
    assert redact(f"got {credential}") == f"got {MASK}"
    # Too short to mask without garbling ordinary text.
    remember("admin")
    assert redact("admin") == "admin"


def test_url_passwords_are_masked_remembered_or_not() -> None:
    password = _secret("pw")
    remember_url(f"postgresql://app:{password}@db.example:5432/pawflow")
    assert redact(f"the password is {password}") == f"the password is {MASK}"
    assert (
        redact("failed to reach smtp://mailer:hunter22@mail.example:587")
        == f"failed to reach smtp://mailer:{MASK}@mail.example:587"
    )
    assert redact("http://example.com:8080/a@b") == "http://example.com:8080/a@b"


@pytest.mark.parametrize(
    "name",
    [
        "token",
        "access_token",
        "api_key",
        "apikey",
        "password",
        "client_secret",
        "session",
        # a JSON Web Token, a one-time password, and OAuth's authorization code and state
        "jwt",
        "otp",
        "code",
        "state",
        "code_verifier",
        "session_state",
        "SAMLResponse",
    ],
)
def test_secret_query_parameters_are_masked(name: str) -> None:
    line = f'"GET /api/session?page=2&{name}=v4lue-of-it&x=1 HTTP/1.1" 200'
    assert redact(line) == f'"GET /api/session?page=2&{name}={MASK}&x=1 HTTP/1.1" 200'


def test_bearer_credentials_and_pawflow_tokens_are_masked_by_their_shape() -> None:
    token = "pf_" + secrets.token_urlsafe(32)
    assert redact(f"token {token} refused") == f"token {MASK} refused"
    assert redact("Authorization: Bearer abcdefgh12345") == f"Authorization: Bearer {MASK}"


def test_secret_named_settings_are_remembered() -> None:
    key, plain = _secret("key"), _secret("plain")
    remember_settings({"OPENAI_API_KEY": key, "HOME_DIRECTORY": plain})
    assert redact(f"{key} {plain}") == f"{MASK} {plain}"


def test_a_model_error_never_carries_a_known_key() -> None:
    key = _secret("sk")
    remember(key)
    error = ModelError(f"model x refused the request (401): bad key {key}", status=401)
    assert key not in str(error) and key not in error.message


def test_log_records_are_masked_in_message_arguments_and_traceback() -> None:
    key = _secret("sk")
    remember(key)
    try:
        raise RuntimeError(f"provider said {key}")
    except RuntimeError as exc:
        record = logging.LogRecord(
            "pawflow.test", logging.ERROR, __file__, 1, "call %s failed: %s", (key, exc), None
        )
        record.exc_info = (type(exc), exc, exc.__traceback__)
    assert RedactingFilter().filter(record)
    formatted = logging.Formatter().format(record)
    assert key not in formatted
    assert f"call {MASK} failed: provider said {MASK}" in formatted


def test_pawflow_mcp_refuses_a_token_on_its_command_line() -> None:
    result = CliRunner().invoke(
        app, ["mcp", "--server", "http://127.0.0.1:9", "--token", "pf_x"], env={}
    )
    assert result.exit_code == 2
    assert "--token is refused" in result.output
    assert "PAWFLOW_TOKEN" in result.output and "--token-file" in result.output
