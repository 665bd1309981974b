"""OpenID Connect with the organization's identity provider: the relying party's half.

:class:`OpenIDProvider` reads the provider's discovery document, sends a browser there with
an authorization-code request (PKCE S256, ``state``, ``nonce``; Authlib makes the request and
exchanges the code), and checks the ID token that comes back: its signature by a key of the
provider's JWKS (fetched again once when a token names a key it does not know, so a rotation
is followed), ``iss``, ``aud``, ``exp``, ``iat`` and the ``nonce`` of that sign-in (joserfc).

Every way this can fail is a :class:`SignInProblem` carrying what a person is shown and the
setting to look at; the token itself is never in it, nor logged.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from pawflow.errors import SignInProblem
from pawflow.redaction import remember
from pawflow.server.settings import ServerSettings

DISCOVERY_TTL = 300.0
"""Seconds the discovery document is kept before it is read again."""
JWKS_REFRESH_GAP = 10.0
"""The least seconds between two reads of the JWKS for an unknown key (a forged ``kid`` must
not make every sign-in fetch it again)."""
LEEWAY = 60
"""Seconds of clock difference with the provider that ``exp`` and ``iat`` allow."""
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA")


def _provider_down(what: str, exc: Exception) -> SignInProblem:
    return SignInProblem(
        f"The identity provider does not answer ({what}: {type(exc).__name__}).",
        setting="PAWFLOW_OIDC_ISSUER",
        status=503,
    )


@dataclass(frozen=True)
class OidcConfig:
    """The sign-on settings, checked; :meth:`from_settings` is None when SSO is not set up."""

    issuer: str
    client_id: str
    client_secret: str
    name: str
    scopes: tuple[str, ...]
    user_claim: str
    email_claim: str
    groups_claim: str
    allowed_domains: frozenset[str]
    allowed_groups: frozenset[str]
    admin_group: str | None
    timeout: float
    redirect_uri: str
    post_logout_uri: str

    @classmethod
    def from_settings(cls, settings: ServerSettings) -> OidcConfig | None:
        if not settings.oidc_issuer:
            return None
        secret = settings.oidc_client_secret or ""
        if not secret and settings.oidc_client_secret_file:
            try:
                with open(settings.oidc_client_secret_file, encoding="utf-8") as file:
                    secret = file.read().strip()
            except OSError:
                secret = ""
        remember(secret)  # never in a log line
        issuer = settings.oidc_issuer.rstrip("/")
        scopes = tuple(settings.oidc_scopes)
        if "openid" not in scopes:
            scopes = ("openid", *scopes)
        base = settings.base_url
        return cls(
            issuer=issuer,
            client_id=settings.oidc_client_id or "",
            client_secret=secret,
            name=settings.oidc_name or (urlsplit(issuer).hostname or issuer),
            scopes=scopes,
            user_claim=settings.oidc_user_claim,
            email_claim=settings.oidc_email_claim,
            groups_claim=settings.oidc_groups_claim,
            allowed_domains=frozenset(d.lower().lstrip("@") for d in settings.oidc_allowed_domains),
            allowed_groups=frozenset(settings.oidc_allowed_groups),
            admin_group=settings.oidc_admin_group or None,
            timeout=settings.oidc_timeout,
            redirect_uri=f"{base}/signin/oidc/callback",
            post_logout_uri=f"{base}/signin",
        )

    def check(self) -> None:
        """The settings' own mistakes, before anything is asked of the provider."""
        if not self.client_id:
            raise SignInProblem(
                "No client id is set.", setting="PAWFLOW_OIDC_CLIENT_ID", status=503
            )
        if not self.client_secret:
            raise SignInProblem(
                "No client secret is set (or its file cannot be read).",
                setting="PAWFLOW_OIDC_CLIENT_SECRET or PAWFLOW_OIDC_CLIENT_SECRET_FILE",
                status=503,
            )


@dataclass(frozen=True)
class Trip:
    """One sign-in sent to the provider: where the browser goes, and what it must bring back."""

    url: str
    state: str
    nonce: str
    code_verifier: str


class OpenIDProvider:
    """The provider ``config`` names, read lazily and kept for a while; thread-safe."""

    def __init__(self, config: OidcConfig, *, now: Callable[[], float] = time.time) -> None:
        self.config = config
        self._now = now
        self._lock = threading.Lock()
        self._metadata: dict[str, Any] | None = None
        self._metadata_at = 0.0
        self._keys: Any = None
        self._keys_at = -JWKS_REFRESH_GAP

    # -- what the provider publishes ----------------------------------------------------------

    def _get(self, url: str, what: str) -> dict[str, Any]:
        try:
            response = httpx.get(url, timeout=self.config.timeout, follow_redirects=False)
        except httpx.HTTPError as exc:
            raise _provider_down(what, exc) from None
        if response.status_code != 200:
            raise SignInProblem(
                f"The identity provider answered {response.status_code} to its {what}.",
                setting="PAWFLOW_OIDC_ISSUER",
                status=503,
            )
        try:
            found = response.json()
        except ValueError:
            found = None
        if not isinstance(found, dict):
            raise SignInProblem(
                f"The identity provider's {what} is not a JSON object.",
                setting="PAWFLOW_OIDC_ISSUER",
                status=503,
            )
        return found

    def metadata(self) -> dict[str, Any]:
        """The discovery document, checked against the configured issuer."""
        with self._lock:
            if self._metadata is not None and self._now() - self._metadata_at < DISCOVERY_TTL:
                return self._metadata
        found = self._get(
            f"{self.config.issuer}/.well-known/openid-configuration", "discovery document"
        )
        if str(found.get("issuer", "")).rstrip("/") != self.config.issuer:
            raise SignInProblem(
                f"The provider names itself {str(found.get('issuer'))[:200]!r}, not the"
                " configured issuer.",
                setting="PAWFLOW_OIDC_ISSUER",
                status=503,
            )
        for needed in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            if not isinstance(found.get(needed), str):
                raise SignInProblem(
                    f"The provider's discovery document has no {needed}.",
                    setting="PAWFLOW_OIDC_ISSUER",
                    status=503,
                )
        with self._lock:
            self._metadata, self._metadata_at = found, self._now()
        return found

    def _key_set(self, *, fresh: bool) -> Any:
        from joserfc.jwk import KeySet  # noqa: PLC0415 (single sign-on is optional)

        with self._lock:
            keys = self._keys
            due = fresh and self._now() - self._keys_at >= JWKS_REFRESH_GAP
        if keys is not None and not due:
            return keys
        document = self._get(str(self.metadata()["jwks_uri"]), "signing keys (JWKS)")
        try:
            keys = KeySet.import_key_set(document)  # type: ignore[arg-type]
        except Exception:
            raise SignInProblem(
                "The provider's signing keys (JWKS) cannot be read.",
                setting="PAWFLOW_OIDC_ISSUER",
                status=503,
            ) from None
        with self._lock:
            self._keys, self._keys_at = keys, self._now()
        return keys

    # -- a sign-in ------------------------------------------------------------------------------

    def _client(self) -> Any:
        from authlib.integrations.httpx_client import OAuth2Client  # noqa: PLC0415

        return OAuth2Client(
            client_id=self.config.client_id,
            client_secret=self.config.client_secret,
            scope=" ".join(self.config.scopes),
            redirect_uri=self.config.redirect_uri,
            code_challenge_method="S256",
            timeout=self.config.timeout,
        )

    def begin(self) -> Trip:
        """A new sign-in: where to send the browser, with its state, nonce and verifier."""
        from authlib.common.security import generate_token  # noqa: PLC0415

        self.config.check()
        endpoint = str(self.metadata()["authorization_endpoint"])
        state, nonce, verifier = (
            secrets.token_urlsafe(32),
            secrets.token_urlsafe(32),
            generate_token(64),
        )
        with self._client() as client:
            url, _ = client.create_authorization_url(
                endpoint, state=state, code_verifier=verifier, nonce=nonce
            )
        return Trip(str(url), state, nonce, verifier)

    def finish(self, code: str, *, nonce: str, code_verifier: str) -> dict[str, Any]:
        """Exchange ``code`` for tokens and return the checked ID token's claims."""
        from authlib.integrations.base_client import OAuthError  # noqa: PLC0415

        self.config.check()
        endpoint = str(self.metadata()["token_endpoint"])
        try:
            with self._client() as client:
                token = client.fetch_token(endpoint, code=code, code_verifier=code_verifier)
        except OAuthError as exc:
            if exc.error == "invalid_client":
                raise SignInProblem(
                    "The identity provider refused this server's client credentials.",
                    setting="PAWFLOW_OIDC_CLIENT_ID and PAWFLOW_OIDC_CLIENT_SECRET",
                    status=503,
                ) from None
            # invalid_grant: a code used already, expired, or not issued to this client.
            raise SignInProblem(
                f"The identity provider refused the sign-in ({exc.error}). Try again."
            ) from None
        except httpx.HTTPError as exc:
            raise _provider_down("token endpoint", exc) from None
        except ValueError:
            raise SignInProblem(
                "The identity provider's token answer cannot be read.", status=502
            ) from None
        raw = token.get("id_token") if isinstance(token, dict) else None
        if not isinstance(raw, str) or not raw:
            raise SignInProblem(
                "The identity provider sent no ID token: is 'openid' among the scopes?",
                setting="PAWFLOW_OIDC_SCOPES",
                status=502,
            )
        return self.validate(raw, nonce=nonce)

    def validate(self, raw: str, *, nonce: str) -> dict[str, Any]:
        """The claims of ``raw`` once its signature, issuer, audience, times and nonce hold."""
        from joserfc import jwt  # noqa: PLC0415
        from joserfc.errors import (  # noqa: PLC0415
            ExpiredTokenError,
            InvalidClaimError,
            JoseError,
            MissingClaimError,
        )

        try:
            token = self._decode(jwt, raw, fresh=False)
        except (JoseError, ValueError, LookupError):
            try:  # a key this server has not seen yet: the provider may have rotated its keys
                token = self._decode(jwt, raw, fresh=True)
            except (JoseError, ValueError, LookupError) as exc:
                raise SignInProblem(
                    f"The ID token's signature is not the provider's ({type(exc).__name__})."
                ) from None
        registry = jwt.JWTClaimsRegistry(
            now=lambda: int(self._now()),
            leeway=LEEWAY,
            iss={"essential": True, "value": self.config.issuer},
            aud={"essential": True, "value": self.config.client_id},
            sub={"essential": True},
            exp={"essential": True},
            iat={"essential": True},
            nonce={"essential": True, "value": nonce},
        )
        try:
            registry.validate(token.claims)
        except ExpiredTokenError:
            raise SignInProblem("The ID token has expired.") from None
        except (InvalidClaimError, MissingClaimError) as exc:
            claim = getattr(exc, "claim", "")
            raise SignInProblem(f"The ID token's {claim or 'claims'} claim is wrong.") from None
        except JoseError:
            raise SignInProblem("The identity provider's ID token was refused.") from None
        azp = token.claims.get("azp")
        if azp is not None and azp != self.config.client_id:
            raise SignInProblem("The ID token was issued to another client (azp).")
        return dict(token.claims)

    def _decode(self, jwt: Any, raw: str, *, fresh: bool) -> Any:
        keys = self._key_set(fresh=fresh)
        return jwt.decode(raw, keys, algorithms=list(ALGORITHMS))

    def logout_url(self) -> str | None:
        """The provider's end-session address for this client, if it has one."""
        try:
            endpoint = self.metadata().get("end_session_endpoint")
        except SignInProblem:
            return None
        if not isinstance(endpoint, str):
            return None
        query = urlencode(
            {
                "client_id": self.config.client_id,
                "post_logout_redirect_uri": self.config.post_logout_uri,
            }
        )
        return f"{endpoint}{'&' if '?' in endpoint else '?'}{query}"
