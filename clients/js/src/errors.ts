/** The problem document (RFC 9457) the API answers errors with. */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  code?: string;
  detail?: string;
  param?: string;
  request_id?: string;
  errors?: Array<{ code?: string; param?: string; detail?: string }> | null;
  [key: string]: unknown;
}

/** Every error the client throws. API errors carry the problem body. */
export class MatchpointError extends Error {
  /** HTTP status; 0 when no answer arrived. */
  readonly status: number;
  /** Machine-readable error code (`not_found`, `validation_failed`...). */
  readonly code: string | undefined;
  /** The offending field, when there is one. */
  readonly param: string | undefined;
  /** The Request-Id of the failed request, for support. */
  readonly requestId: string | undefined;
  /** The whole problem body. */
  readonly problem: Problem | undefined;
  /** The response headers. */
  readonly headers: Headers | undefined;

  constructor(message: string, status = 0, problem?: Problem, headers?: Headers) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.problem = problem;
    this.headers = headers;
    this.code = problem?.code;
    this.param = problem?.param;
    this.requestId = problem?.request_id ?? headers?.get("request-id") ?? undefined;
  }

  /** The error of the status an API answered, with its problem body. */
  static fromResponse(status: number, problem: Problem | undefined, headers: Headers): MatchpointError {
    const detail = problem?.detail ?? problem?.title ?? `HTTP ${status}`;
    const msg = `${status}${problem?.code ? " " + problem.code : ""}: ${detail}${problem?.param ? ` (${problem.param})` : ""}`;
    const Cls = statusClasses[status] ?? (status >= 500 ? InternalServerError : MatchpointError);
    return new Cls(msg, status, problem, headers);
  }
}

/** 400: the request is malformed. */
export class BadRequestError extends MatchpointError {}
/** 401: no valid credential. */
export class AuthenticationError extends MatchpointError {}
/** 403: the credential may not do this (scope, tier, role). */
export class PermissionDeniedError extends MatchpointError {}
/** 404: no such object, or not yours to see. */
export class NotFoundError extends MatchpointError {}
/** 409: the request conflicts with the object's state. */
export class ConflictError extends MatchpointError {}
/** 422: a field is invalid; param names it. */
export class UnprocessableEntityError extends MatchpointError {}
/** 429: too many requests; retried by the client before it throws this. */
export class RateLimitError extends MatchpointError {}
/** 5xx: the service failed; retried by the client before it throws this. */
export class InternalServerError extends MatchpointError {}
/** No answer: the connection failed. */
export class APIConnectionError extends MatchpointError {}
/** No answer within the timeout. */
export class APIConnectionTimeoutError extends APIConnectionError {}

const statusClasses: Record<number, new (m: string, s: number, p?: Problem, h?: Headers) => MatchpointError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

/** A webhook whose signature or timestamp does not hold. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

/** The token endpoint refused a code or a refresh token (RFC 6749 5.2). */
export class OAuthError extends MatchpointError {
  /** The OAuth error code: invalid_grant, invalid_client... */
  readonly error: string;
  constructor(status: number, body: { error?: string; error_description?: string }, headers: Headers) {
    super(`${status} ${body.error ?? "oauth_error"}: ${body.error_description ?? ""}`, status, { code: body.error, detail: body.error_description }, headers);
    this.error = body.error ?? "oauth_error";
  }
}
