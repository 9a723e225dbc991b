"""OAuth 2.0 helpers: PKCE (S256), state, the callback, token sets."""

import base64
import hashlib
import secrets
import time
from dataclasses import dataclass, field
from typing import List, Optional
from urllib.parse import parse_qs, urlparse

from ._errors import APIError, MatchpointError


@dataclass
class OAuthConfig:
    """An OAuth client of the API; client_secret is None for public clients."""

    client_id: str
    redirect_uri: str
    client_secret: Optional[str] = None
    scopes: List[str] = field(default_factory=lambda: ["read"])


@dataclass
class PKCE:
    verifier: str
    challenge: str


def pkce() -> PKCE:
    """A random code verifier and its S256 challenge (RFC 7636)."""
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return PKCE(verifier, challenge)


def new_state() -> str:
    """A random state value binding the callback to the session that started the flow."""
    return secrets.token_urlsafe(16)


@dataclass
class TokenSet:
    access_token: str
    refresh_token: Optional[str] = None
    scope: Optional[str] = None
    expires_at: Optional[float] = None  # Unix seconds

    def expires_within(self, seconds: float) -> bool:
        return self.expires_at is not None and self.expires_at - time.time() < seconds


class StateMismatchError(MatchpointError):
    """The callback's state is not the one sent."""


def parse_callback(url: str, state: str) -> str:
    """The code of the redirect the browser came back with, after checking state."""
    q = {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}
    if "error" in q:
        raise APIError(400, {"error": q["error"], "error_description": q.get("error_description")}, {})
    if q.get("state") != state:
        raise StateMismatchError("the callback's state is not the one sent")
    return q.get("code", "")
