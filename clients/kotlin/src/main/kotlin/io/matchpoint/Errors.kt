package io.matchpoint

import org.json.JSONObject

/**
 * Every error the client throws. API errors carry the problem body
 * (RFC 9457): status, code, param, requestId.
 */
open class MatchpointException @JvmOverloads constructor(
    message: String,
    /** HTTP status; 0 when no answer arrived. */
    val status: Int = 0,
    /** The whole problem body, when there is one. */
    val problem: JSONObject? = null,
    /** The response headers (lower-case names). */
    val headers: Map<String, List<String>> = emptyMap(),
    cause: Throwable? = null
) : RuntimeException(message, cause) {
    /** Machine-readable error code (not_found, validation_failed...). */
    val code: String? get() = problem?.optString("code", null)
    /** The offending field, when there is one. */
    val param: String? get() = problem?.optString("param", null)
    /** The Request-Id of the failed request, for support. */
    val requestId: String? get() = problem?.optString("request_id", null) ?: headers["request-id"]?.firstOrNull()

    companion object {
        /** The exception for a status, with its problem body. */
        @JvmStatic fun of(status: Int, problem: JSONObject?, headers: Map<String, List<String>>): MatchpointException {
            val detail = problem?.optString("detail", null) ?: problem?.optString("title", null) ?: "HTTP $status"
            val code = problem?.optString("code", null)
            val param = problem?.optString("param", null)
            val msg = "$status" + (if (code != null) " $code" else "") + ": $detail" + (if (param != null) " ($param)" else "")
            return when {
                status == 400 -> BadRequestException(msg, status, problem, headers)
                status == 401 -> AuthenticationException(msg, status, problem, headers)
                status == 403 -> PermissionDeniedException(msg, status, problem, headers)
                status == 404 -> NotFoundException(msg, status, problem, headers)
                status == 409 -> ConflictException(msg, status, problem, headers)
                status == 422 -> UnprocessableEntityException(msg, status, problem, headers)
                status == 429 -> RateLimitException(msg, status, problem, headers)
                status >= 500 -> InternalServerException(msg, status, problem, headers)
                else -> MatchpointException(msg, status, problem, headers)
            }
        }
    }
}

/** 400: the request is malformed. */
class BadRequestException(m: String, s: Int, p: JSONObject?, h: Map<String, List<String>>) : MatchpointException(m, s, p, h)
/** 401: no valid credential. */
class AuthenticationException(m: String, s: Int, p: JSONObject?, h: Map<String, List<String>>) : MatchpointException(m, s, p, h)
/** 403: the credential may not do this (scope, tier, role). */
class PermissionDeniedException(m: String, s: Int, p: JSONObject?, h: Map<String, List<String>>) : MatchpointException(m, s, p, h)
/** 404: no such object, or not yours to see. */
class NotFoundException(m: String, s: Int, p: JSONObject?, h: Map<String, List<String>>) : MatchpointException(m, s, p, h)
/** 409: the request conflicts with the object's state. */
class ConflictException(m: String, s: Int, p: JSONObject?, h: Map<String, List<String>>) : MatchpointException(m, s, p, h)
/** 422: a field is invalid; param names it. */
class UnprocessableEntityException(m: String, s: Int, p: JSONObject?, h: Map<String, List<String>>) : MatchpointException(m, s, p, h)
/** 429: too many requests; retried by the client before it throws this. */
class RateLimitException(m: String, s: Int, p: JSONObject?, h: Map<String, List<String>>) : MatchpointException(m, s, p, h)
/** 5xx: the service failed; retried by the client before it throws this. */
class InternalServerException(m: String, s: Int, p: JSONObject?, h: Map<String, List<String>>) : MatchpointException(m, s, p, h)
/** No answer: the connection failed or timed out. */
class APIConnectionException(m: String, cause: Throwable?) : MatchpointException(m, 0, null, emptyMap(), cause)

/** The token endpoint refused a code or a refresh token (RFC 6749 5.2); error is invalid_grant, invalid_client... */
class OAuthException(val error: String, description: String?, status: Int, h: Map<String, List<String>>) :
    MatchpointException("$status $error: ${description ?: ""}", status, JSONObject().put("code", error).put("detail", description ?: ""), h)

/** A webhook whose signature or timestamp does not hold. */
class WebhookVerificationException(message: String) : Exception(message)
