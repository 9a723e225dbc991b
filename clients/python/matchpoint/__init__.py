"""Matchpoint API client (standard library only).

    import matchpoint
    client = matchpoint.Client(base_url="https://api.matchpoint.example", api_key="mpk_live_...")
    me = client.get_me()
"""

from . import webhooks
from ._client import VERSION, Client
from ._errors import (APIConnectionError, APIError, APITimeoutError, AuthenticationError, BadRequestError,
                      ConflictError, InternalServerError, MatchpointError, NotFoundError, PermissionDeniedError,
                      RateLimitError, UnprocessableEntityError, WebhookVerificationError)
from ._operations import NOT_GIVEN, OPERATIONS
from ._types import *  # noqa: F401,F403
from .oauth import OAuthConfig, PKCE, StateMismatchError, TokenSet, new_state, parse_callback, pkce
from .webhooks import WebhookEvent

__version__ = VERSION
