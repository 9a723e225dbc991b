import Foundation

/// What kind of error status an APIError has.
public enum APIErrorKind: Sendable, Equatable {
    case badRequest          // 400
    case authentication      // 401
    case permissionDenied    // 403
    case notFound            // 404
    case conflict            // 409
    case unprocessableEntity // 422
    case rateLimited         // 429
    case server              // 5xx
    case other

    init(status: Int) {
        switch status {
        case 400: self = .badRequest
        case 401: self = .authentication
        case 403: self = .permissionDenied
        case 404: self = .notFound
        case 409: self = .conflict
        case 422: self = .unprocessableEntity
        case 429: self = .rateLimited
        case 500...599: self = .server
        default: self = .other
        }
    }
}

/// An answer of the API with an error status, carrying its problem
/// document (RFC 9457), or an OAuth endpoint's error object.
public struct APIError: Error, Sendable, CustomStringConvertible {
    public let status: Int
    public let kind: APIErrorKind
    public let code: String?
    public let param: String?
    public let detail: String?
    public let requestID: String?
    public let problem: Problem?
    public let body: Data

    init(status: Int, body: Data, headers: [AnyHashable: Any]) {
        self.status = status
        self.kind = APIErrorKind(status: status)
        self.body = body
        let problem = try? JSONDecoder().decode(Problem.self, from: body)
        self.problem = problem
        let oauth = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        self.code = problem?.code ?? oauth?["error"] as? String
        self.param = problem?.param
        self.detail = problem?.detail ?? oauth?["error_description"] as? String
        var header: String?
        for (k, v) in headers where (k as? String)?.lowercased() == "request-id" { header = v as? String }
        self.requestID = problem?.requestId ?? header
    }

    /// A timeout, a request with the same Idempotency-Key still running, too
    /// many requests, or a server error: worth retrying.
    var isRetryable: Bool {
        status == 408 || status == 429 || status >= 500 || (status == 409 && code == "idempotency_in_progress")
    }

    public var description: String {
        var s = "matchpoint: \(status)"
        if let code = code { s += " \(code)" }
        if let detail = detail { s += ": \(detail)" }
        if let param = param { s += " (param \(param))" }
        if let id = requestID { s += " [request \(id)]" }
        return s
    }
}

/// Errors that are not answers of the API.
public enum MatchpointError: Error {
    /// No answer: the connection failed or timed out.
    case connection(Error)
    /// The answer did not decode into the operation's type.
    case decoding(path: String, underlying: Error)
    /// The OAuth callback's state is not the one sent.
    case stateMismatch
}

/// A webhook whose signature or timestamp did not verify.
public struct WebhookVerificationError: Error, Sendable, CustomStringConvertible {
    public let reason: String
    public var description: String { "matchpoint: webhook refused: \(reason)" }
}
