"""Errors of the library: an API answer with an error status becomes an
APIError subclass chosen by status, carrying the problem document."""

from typing import Any, Dict, Mapping, Optional


class MatchpointError(Exception):
    """Base of every error this library raises."""


class APIError(MatchpointError):
    """The API answered with an error status.

    status, code, param, detail and request_id come from the problem
    document (RFC 9457), problem is the whole document (or the OAuth error
    object), headers the answer's headers.
    """

    def __init__(self, status: int, problem: Dict[str, Any], headers: Mapping[str, str], body: bytes = b""):
        self.status = status
        self.problem = problem
        self.headers = headers
        self.body = body
        self.code: Optional[str] = problem.get("code") or problem.get("error")
        self.param: Optional[str] = problem.get("param")
        self.detail: Optional[str] = problem.get("detail") or problem.get("error_description")
        self.request_id: Optional[str] = problem.get("request_id") or headers.get("Request-Id")
        msg = f"{status}"
        if self.code:
            msg += f" {self.code}"
        if self.detail:
            msg += f": {self.detail}"
        if self.param:
            msg += f" (param {self.param})"
        if self.request_id:
            msg += f" [request {self.request_id}]"
        super().__init__(msg)


class BadRequestError(APIError):
    """400"""


class AuthenticationError(APIError):
    """401"""


class PermissionDeniedError(APIError):
    """403"""


class NotFoundError(APIError):
    """404"""


class ConflictError(APIError):
    """409"""


class UnprocessableEntityError(APIError):
    """422: a field is invalid; param names it."""


class RateLimitError(APIError):
    """429"""


class InternalServerError(APIError):
    """5xx"""


class APIConnectionError(MatchpointError):
    """No answer: the connection failed."""


class APITimeoutError(APIConnectionError):
    """No answer in time."""


class WebhookVerificationError(MatchpointError):
    """A webhook's signature or timestamp did not verify."""


_BY_STATUS = {400: BadRequestError, 401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError,
              409: ConflictError, 422: UnprocessableEntityError, 429: RateLimitError}


def error_for(status: int, problem: Dict[str, Any], headers: Mapping[str, str], body: bytes = b"") -> APIError:
    cls = _BY_STATUS.get(status) or (InternalServerError if status >= 500 else APIError)
    return cls(status, problem, headers, body)
