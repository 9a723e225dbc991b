"""The client: transport, credentials, retries, OAuth refresh."""

import json
import random
import ssl
import threading
import time
import uuid
from email.utils import parsedate_to_datetime
from typing import Any, Callable, Dict, Iterator, Mapping, Optional
from urllib import error as urlerror
from urllib import request as urlrequest
from urllib.parse import urlencode

from . import _types
from ._errors import APIConnectionError, APIError, APITimeoutError, error_for
from ._operations import NotGiven, Operations
from .oauth import PKCE, OAuthConfig, TokenSet

VERSION = "0.1.0"
REFRESH_MARGIN = 30  # seconds before expiry when a token is refreshed first
MAX_RETRY_AFTER = 60.0


class _NoRedirect(urlrequest.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102
        return None


def _query_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


class Client(Operations):
    """A client of the Matchpoint API.

        client = matchpoint.Client(base_url="https://api.matchpoint.example", api_key="mpk_live_...")
        me = client.get_me()

    Credentials: api_key, or access_token (never refreshed), or oauth with
    tokens (refreshed before expiry and once on a 401; on_refresh receives
    each new TokenSet to persist). Calls are thread-safe.
    """

    def __init__(self, base_url: str, api_key: Optional[str] = None, access_token: Optional[str] = None, *,
                 oauth: Optional[OAuthConfig] = None, tokens: Optional[TokenSet] = None,
                 on_refresh: Optional[Callable[[TokenSet], None]] = None,
                 timeout: float = 60.0, max_retries: int = 2, ssl_context: Optional[ssl.SSLContext] = None):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.oauth = oauth
        self.on_refresh = on_refresh
        self._tokens = tokens if tokens is not None else (TokenSet(access_token) if access_token else None)
        self._lock = threading.Lock()
        handlers = [_NoRedirect()]
        if ssl_context is not None:
            handlers.append(urlrequest.HTTPSHandler(context=ssl_context))
        self._opener = urlrequest.build_opener(*handlers)
        self.user_agent = f"matchpoint-python/{VERSION}"
        self._sleep = time.sleep

    # -- OAuth ------------------------------------------------------------

    @property
    def tokens(self) -> Optional[TokenSet]:
        with self._lock:
            return self._tokens

    def authorize_url(self, config: OAuthConfig, state: str, pkce: PKCE) -> str:
        """Where to send the person's browser; keep state and pkce.verifier for the callback."""
        return self.oauth_authorize(client_id=config.client_id, redirect_uri=config.redirect_uri, response_type="code",
                                    scope=" ".join(config.scopes), state=state, code_challenge=pkce.challenge,
                                    code_challenge_method="S256")

    def exchange_code(self, config: OAuthConfig, code: str, verifier: Optional[str] = None) -> TokenSet:
        """Trades an authorization code (and its PKCE verifier) for a token set."""
        kw: Dict[str, Any] = {"grant_type": "authorization_code", "code": code, "redirect_uri": config.redirect_uri,
                              "client_id": config.client_id}
        if verifier:
            kw["code_verifier"] = verifier
        if config.client_secret:
            kw["client_secret"] = config.client_secret
        return self._token_set(**kw)

    def refresh_token(self, config: OAuthConfig, refresh_token: str) -> TokenSet:
        """Trades a refresh token for a new token set (refresh tokens rotate: keep the new one)."""
        kw: Dict[str, Any] = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": config.client_id}
        if config.client_secret:
            kw["client_secret"] = config.client_secret
        return self._token_set(**kw)

    def _token_set(self, **kw: Any) -> TokenSet:
        start = time.time()
        res = self.oauth_token(**kw)
        return TokenSet(access_token=res.access_token, refresh_token=res.refresh_token, scope=res.scope,
                        expires_at=start + res.expires_in if res.expires_in else None)

    def _access_token(self) -> Optional[str]:
        with self._lock:
            tokens = self._tokens
        if tokens is None:
            return None
        if self.oauth and tokens.refresh_token and tokens.expires_within(REFRESH_MARGIN):
            self._refresh(tokens.access_token)
            with self._lock:
                tokens = self._tokens
        return tokens.access_token

    def _refresh(self, stale: str) -> None:
        # The lock makes concurrent callers refresh once: the refresh token
        # rotates on use, and reusing an old one revokes the grant.
        with self._lock:
            if self._tokens is None or self._tokens.access_token != stale:
                return
            fresh = self.refresh_token(self.oauth, self._tokens.refresh_token)
            if not fresh.refresh_token:
                fresh.refresh_token = self._tokens.refresh_token
            self._tokens = fresh
        if self.on_refresh:
            self.on_refresh(fresh)

    # -- transport --------------------------------------------------------

    def _url(self, path: str, query: Optional[Dict[str, Any]] = None) -> str:
        url = self.base_url + path
        if query:
            pairs = []
            for k, v in query.items():
                if v is None:
                    continue
                for item in (v if isinstance(v, (list, tuple)) else [v]):
                    pairs.append((k, _query_value(item)))
            if pairs:
                url += "?" + urlencode(pairs)
        return url

    def _auto_page(self, fetch: Callable[..., Any], kwargs: Dict[str, Any]) -> Iterator[Any]:
        kwargs = dict(kwargs)
        while True:
            page = fetch(**kwargs)
            yield from page.data or []
            if not page.has_more or not page.next_cursor:
                return
            kwargs["cursor"] = page.next_cursor

    def _request(self, method: str, path: str, *, query: Optional[Dict[str, Any]] = None, body: Any = None,
                 headers: Optional[Dict[str, Any]] = None, form: bool = False, auth: bool = True, cast: Any = None,
                 request_options: Optional[Dict[str, Any]] = None) -> Any:
        opts = request_options or {}
        retries = opts.get("max_retries", self.max_retries)
        timeout = opts.get("timeout", self.timeout)
        data = None
        hdrs = {"User-Agent": self.user_agent, "Accept": "application/json"}
        if body is not None:
            encoded = _types.encode(body)
            if form:
                data = urlencode({k: _query_value(v) for k, v in encoded.items() if v is not None}).encode()
                hdrs["Content-Type"] = "application/x-www-form-urlencoded"
            else:
                data = json.dumps(encoded).encode()
                hdrs["Content-Type"] = "application/json"
        if method == "POST":
            hdrs["Idempotency-Key"] = opts.get("idempotency_key") or uuid.uuid4().hex
        for k, v in (headers or {}).items():
            hdrs[k] = str(v)
        for k, v in (opts.get("headers") or {}).items():
            hdrs[k] = str(v)
        url = self._url(path, query)
        refreshed = False
        attempt = 0
        while True:
            sent_token = None
            if auth:
                sent_token = self._access_token()
                if sent_token:
                    hdrs["Authorization"] = "Bearer " + sent_token
                elif self.api_key:
                    hdrs["Authorization"] = "Bearer " + self.api_key
            req = urlrequest.Request(url, data=data, method=method, headers=hdrs)
            try:
                res = self._opener.open(req, timeout=timeout)
            except urlerror.HTTPError as e:
                raw = e.read()
                try:
                    problem = json.loads(raw) if raw else {}
                except ValueError:
                    problem = {}
                if not isinstance(problem, dict):
                    problem = {}
                err = error_for(e.code, problem, e.headers, raw)
                if (e.code == 401 and auth and sent_token and self.oauth and not refreshed
                        and self.tokens and self.tokens.refresh_token):
                    refreshed = True
                    self._refresh(sent_token)
                    continue
                if attempt >= retries or not _retryable(err):
                    raise err from None
                self._sleep(_backoff(attempt, e.headers.get("Retry-After")))
                attempt += 1
                continue
            except (urlerror.URLError, ConnectionError, TimeoutError, OSError) as e:
                reason = getattr(e, "reason", e)
                cls = APITimeoutError if isinstance(reason, TimeoutError) or "timed out" in str(reason) else APIConnectionError
                if attempt >= retries:
                    raise cls(str(reason)) from e
                self._sleep(_backoff(attempt, None))
                attempt += 1
                continue
            if cast == "stream":
                return res
            with res:
                raw = res.read()
            if cast == "text":
                return raw.decode("utf-8", "replace")
            if cast is None or not raw.strip():
                return None
            return _types.decode(cast, json.loads(raw))


def _retryable(err: APIError) -> bool:
    if err.status in (408, 429) or err.status >= 500:
        return True
    return err.status == 409 and err.code == "idempotency_in_progress"


def _retry_after(value: Optional[str]) -> Optional[float]:
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return None


def _backoff(attempt: int, retry_after: Optional[str]) -> float:
    """Retry-After when the answer gives one, else 0.5 s doubling up to 8 s,
    with up to a quarter taken off at random so clients do not retry together."""
    ra = _retry_after(retry_after)
    if ra is not None:
        return min(ra, MAX_RETRY_AFTER)
    d = min(0.5 * 2 ** attempt, 8.0)
    return d - random.random() * 0.25 * d


__all__ = ["Client", "VERSION", "NotGiven"]
