import CryptoKit
import Foundation

/// An OAuth client of the API; clientSecret is nil for public clients
/// (mobile apps), which rely on PKCE alone.
public struct OAuthConfig: Sendable {
    public var clientID: String
    public var clientSecret: String?
    public var redirectURI: String
    public var scopes: [String]

    public init(clientID: String, clientSecret: String? = nil, redirectURI: String, scopes: [String] = ["read"]) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.redirectURI = redirectURI
        self.scopes = scopes
    }
}

/// A code verifier and its S256 challenge (RFC 7636).
public struct PKCE: Sendable {
    public let verifier: String
    public let challenge: String

    public init() {
        let v = base64URL(randomBytes(32))
        verifier = v
        challenge = base64URL(Data(SHA256.hash(data: Data(v.utf8))))
    }
}

/// A random state value binding the callback to the session that started the flow.
public func newState() -> String { base64URL(randomBytes(16)) }

func randomBytes(_ n: Int) -> Data {
    var g = SystemRandomNumberGenerator()
    return Data((0..<n).map { _ in UInt8.random(in: 0...255, using: &g) })
}

func base64URL(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// What the token endpoint grants.
public struct TokenSet: Codable, Sendable {
    public var accessToken: String
    public var refreshToken: String?
    public var scope: String?
    public var expiresAt: Date?

    public init(accessToken: String, refreshToken: String? = nil, scope: String? = nil, expiresAt: Date? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.scope = scope
        self.expiresAt = expiresAt
    }
}

/// The client's token set; an actor, so that concurrent calls that find it
/// stale refresh it once (the refresh token rotates on use).
actor TokenStore {
    let config: OAuthConfig?
    var tokens: TokenSet
    let onRefresh: (@Sendable (TokenSet) -> Void)?
    var refreshing: Task<TokenSet, Error>?

    init(config: OAuthConfig?, tokens: TokenSet, onRefresh: (@Sendable (TokenSet) -> Void)?) {
        self.config = config
        self.tokens = tokens
        self.onRefresh = onRefresh
    }

    var canRefresh: Bool { config != nil && tokens.refreshToken != nil }

    func accessToken(client: Matchpoint) async throws -> String {
        if canRefresh, let exp = tokens.expiresAt, exp.timeIntervalSinceNow < 30 {
            try await refresh(stale: tokens.accessToken, client: client)
        }
        return tokens.accessToken
    }

    func refresh(stale: String, client: Matchpoint) async throws {
        if tokens.accessToken != stale { return }
        if let running = refreshing {
            _ = try await running.value
            return
        }
        guard let config = config, let refreshToken = tokens.refreshToken else { return }
        let task = Task { try await client.refreshToken(config: config, refreshToken: refreshToken) }
        refreshing = task
        defer { refreshing = nil }
        var fresh = try await task.value
        if fresh.refreshToken == nil { fresh.refreshToken = refreshToken }
        tokens = fresh
        onRefresh?(fresh)
    }
}

extension Matchpoint {
    /// Where to send the person's browser; keep state and pkce.verifier for the callback.
    public func authorizeURL(config: OAuthConfig, state: String, pkce: PKCE) -> URL {
        oauthAuthorize(OauthAuthorizeParams(clientId: config.clientID, redirectUri: config.redirectURI, responseType: "code",
                                            scope: config.scopes.joined(separator: " "), state: state,
                                            codeChallenge: pkce.challenge, codeChallengeMethod: "S256"))
    }

    /// The code of the redirect the browser came back with, after checking state.
    public static func parseCallback(_ callback: URL, state: String) throws -> String {
        let items = URLComponents(url: callback, resolvingAgainstBaseURL: false)?.queryItems ?? []
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        if let error = value("error") {
            let body = try JSONSerialization.data(withJSONObject: ["error": error, "error_description": value("error_description") ?? ""])
            throw APIError(status: 400, body: body, headers: [:])
        }
        guard value("state") == state else { throw MatchpointError.stateMismatch }
        return value("code") ?? ""
    }

    /// Trades an authorization code and its PKCE verifier for a token set.
    public func exchangeCode(config: OAuthConfig, code: String, verifier: String?) async throws -> TokenSet {
        try await tokenSet(OauthTokenRequest(clientId: config.clientID, clientSecret: config.clientSecret, code: code,
                                             codeVerifier: verifier, grantType: "authorization_code",
                                             redirectUri: config.redirectURI))
    }

    /// Trades a refresh token for a new token set (keep the new refresh token).
    public func refreshToken(config: OAuthConfig, refreshToken: String) async throws -> TokenSet {
        try await tokenSet(OauthTokenRequest(clientId: config.clientID, clientSecret: config.clientSecret,
                                             grantType: "refresh_token", refreshToken: refreshToken))
    }

    func tokenSet(_ request: OauthTokenRequest) async throws -> TokenSet {
        let start = Date()
        let res = try await oauthToken(request)
        return TokenSet(accessToken: res.accessToken ?? "", refreshToken: res.refreshToken, scope: res.scope,
                        expiresAt: res.expiresIn.map { start.addingTimeInterval(TimeInterval($0)) })
    }
}
