import Foundation

/// A client of the Matchpoint API: one method per operation of the
/// service's OpenAPI document (Operations.swift and Types.swift, written by
/// clients/gen), over this hand-written core: credentials, timeouts,
/// retries with backoff that honour Retry-After, an Idempotency-Key on
/// every POST, typed errors, OAuth with PKCE and refresh, webhooks.
///
///     let client = Matchpoint(baseURL: URL(string: "https://api.matchpoint.example")!, apiKey: key)
///     let me = try await client.getMe()
public final class Matchpoint: @unchecked Sendable {
    public static let version = "0.1.0"

    public let baseURL: URL
    let apiKey: String?
    let tokens: TokenStore?
    let session: URLSession
    public var maxRetries: Int
    public var timeout: TimeInterval
    let userAgent = "matchpoint-swift/\(Matchpoint.version)"

    /// A client that authenticates with an API key (or nothing, for public operations).
    public init(baseURL: URL, apiKey: String? = nil, session: URLSession = .shared, maxRetries: Int = 2, timeout: TimeInterval = 60) {
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.tokens = nil
        self.session = session
        self.maxRetries = maxRetries
        self.timeout = timeout
    }

    /// A client that authenticates with an OAuth access token, never refreshed.
    public convenience init(baseURL: URL, accessToken: String, session: URLSession = .shared) {
        self.init(baseURL: baseURL, oauth: nil, tokens: TokenSet(accessToken: accessToken), session: session)
    }

    /// A client that authenticates with a token set of an OAuth client: the
    /// access token is refreshed shortly before it expires and once on a
    /// 401, once for concurrent calls; onRefresh receives each new set.
    public init(baseURL: URL, oauth: OAuthConfig?, tokens: TokenSet, onRefresh: (@Sendable (TokenSet) -> Void)? = nil,
                session: URLSession = .shared, maxRetries: Int = 2, timeout: TimeInterval = 60) {
        self.baseURL = baseURL
        self.apiKey = nil
        self.session = session
        self.maxRetries = maxRetries
        self.timeout = timeout
        self.tokens = TokenStore(config: oauth, tokens: tokens, onRefresh: onRefresh)
    }

    // MARK: - Transport

    func url(path: String, query: [URLQueryItem]) -> URL {
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        var components = URLComponents(string: base + path)!
        if !query.isEmpty {
            components.queryItems = query
            // "+" would read as a space in a query.
            components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        }
        return components.url!
    }

    func request<T: Decodable, B: Encodable>(method: String, path: String, query: [URLQueryItem], headers: [String: String],
                                              body: B?, form: Bool, auth: Bool) async throws -> T {
        let (data, _) = try await send(method: method, path: path, query: query, headers: headers, body: body, form: form, auth: auth)
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw MatchpointError.decoding(path: path, underlying: error)
        }
    }

    func stream<B: Encodable>(method: String, path: String, query: [URLQueryItem], headers: [String: String],
                              body: B?, form: Bool, auth: Bool) async throws -> URLSession.AsyncBytes {
        var req = URLRequest(url: url(path: path, query: query))
        req.httpMethod = method
        req.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        req.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        for (k, v) in headers { req.setValue(v, forHTTPHeaderField: k) }
        if auth {
            let token = try await credential()
            if let token = token { req.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        }
        let (bytes, response) = try await session.bytes(for: req)
        let http = response as! HTTPURLResponse
        if http.statusCode >= 300 {
            var data = Data()
            for try await b in bytes { data.append(b) }
            throw APIError(status: http.statusCode, body: data, headers: http.allHeaderFields)
        }
        return bytes
    }

    /// Sends one call: its attempts, until a 2xx answer or an error that
    /// should not be retried.
    func send<B: Encodable>(method: String, path: String, query: [URLQueryItem], headers: [String: String],
                            body: B?, form: Bool, auth: Bool) async throws -> (Data, HTTPURLResponse) {
        var payload: Data?
        var contentType: String?
        if let body = body {
            let json = try JSONEncoder().encode(body)
            if form {
                payload = Data(formEncode(json).utf8)
                contentType = "application/x-www-form-urlencoded"
            } else {
                payload = json
                contentType = "application/json"
            }
        }
        let idempotencyKey = method == "POST" ? UUID().uuidString : nil
        var refreshed = false
        var attempt = 0
        while true {
            var req = URLRequest(url: url(path: path, query: query), timeoutInterval: timeout)
            req.httpMethod = method
            req.httpBody = payload
            req.setValue(userAgent, forHTTPHeaderField: "User-Agent")
            req.setValue("application/json", forHTTPHeaderField: "Accept")
            if let ct = contentType { req.setValue(ct, forHTTPHeaderField: "Content-Type") }
            if let key = idempotencyKey { req.setValue(key, forHTTPHeaderField: "Idempotency-Key") }
            var sent: String?
            if auth {
                sent = try await credential()
                if let token = sent { req.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
            }
            for (k, v) in headers { req.setValue(v, forHTTPHeaderField: k) }
            let data: Data
            let response: URLResponse
            do {
                (data, response) = try await session.data(for: req)
            } catch {
                if Task.isCancelled || attempt >= maxRetries { throw MatchpointError.connection(error) }
                try await Task.sleep(nanoseconds: UInt64(backoff(attempt: attempt, retryAfter: nil) * 1e9))
                attempt += 1
                continue
            }
            let http = response as! HTTPURLResponse
            if http.statusCode < 300 { return (data, http) }
            let err = APIError(status: http.statusCode, body: data, headers: http.allHeaderFields)
            if http.statusCode == 401, auth, !refreshed, let store = tokens, let stale = sent {
                let canRefresh = await store.canRefresh
                if canRefresh {
                    refreshed = true
                    try await store.refresh(stale: stale, client: self)
                    continue
                }
            }
            if attempt >= maxRetries || !err.isRetryable { throw err }
            let retryAfter = http.value(forHTTPHeaderField: "Retry-After")
            try await Task.sleep(nanoseconds: UInt64(backoff(attempt: attempt, retryAfter: retryAfter) * 1e9))
            attempt += 1
        }
    }

    func credential() async throws -> String? {
        if let store = tokens { return try await store.accessToken(client: self) }
        return apiKey
    }
}

/// Wait before the retry after attempt: the answer's Retry-After (seconds or
/// an HTTP date, at most 60 s) when it gives one, else 0.5 s doubling up to
/// 8 s with up to a quarter taken off at random.
func backoff(attempt: Int, retryAfter: String?) -> Double {
    if let value = retryAfter?.trimmingCharacters(in: .whitespaces) {
        if let seconds = Double(value), seconds >= 0 { return min(seconds, 60) }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        if let date = f.date(from: value) { return min(max(date.timeIntervalSinceNow, 0), 60) }
    }
    let d = min(0.5 * pow(2, Double(attempt)), 8)
    return d - Double.random(in: 0..<0.25) * d
}

func escapePath(_ s: String) -> String {
    var allowed = CharacterSet.urlPathAllowed
    allowed.remove("/")
    return s.addingPercentEncoding(withAllowedCharacters: allowed) ?? s
}

/// Encodes a request type's JSON object as a form: its fields as strings.
func formEncode(_ json: Data) -> String {
    guard let object = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any] else { return "" }
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return object.keys.sorted().compactMap { key -> String? in
        guard let raw = object[key], !(raw is NSNull) else { return nil }
        let value = (raw as? String) ?? "\(raw)"
        let k = key.addingPercentEncoding(withAllowedCharacters: allowed) ?? key
        let v = value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
        return "\(k)=\(v)"
    }.joined(separator: "&")
}

/// The body of operations that send none.
struct Empty: Encodable {}

/// A value that goes in a query string or header.
protocol QueryValue {
    var queryString: String { get }
}

extension String: QueryValue { var queryString: String { self } }
extension Int: QueryValue { var queryString: String { String(self) } }
extension Double: QueryValue { var queryString: String { String(self) } }
extension Bool: QueryValue { var queryString: String { self ? "true" : "false" } }

func add<T: QueryValue>(_ items: inout [URLQueryItem], _ name: String, _ value: T?) {
    if let v = value { items.append(URLQueryItem(name: name, value: v.queryString)) }
}

func add<T: QueryValue>(_ items: inout [URLQueryItem], _ name: String, _ values: [T]?) {
    for v in values ?? [] { items.append(URLQueryItem(name: name, value: v.queryString)) }
}

func add<T: QueryValue>(_ headers: inout [String: String], _ name: String, _ value: T?) {
    if let v = value { headers[name] = v.queryString }
}
