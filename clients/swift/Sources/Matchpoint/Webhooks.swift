import CryptoKit
import Foundation

/// Verification of the webhooks Matchpoint sends (Standard Webhooks):
/// headers webhook-id, webhook-timestamp (Unix seconds) and
/// webhook-signature, one or more space-separated "v1,<base64 HMAC-SHA256>"
/// signatures of "<id>.<timestamp>.<body>" made with the subscription's
/// secret ("whsec_" + base64 of the key). One match is enough.
public enum Webhooks {
    /// How far a timestamp may be from now, either way.
    public static let tolerance: TimeInterval = 300

    /// Checks a delivery's signature and timestamp and returns the event.
    public static func verify(payload: Data, headers: [String: String], secret: String, now: Date = Date()) throws -> WebhookEvent {
        let encoded = secret.hasPrefix("whsec_") ? String(secret.dropFirst(6)) : secret
        guard let key = Data(base64Encoded: encoded), !key.isEmpty else {
            throw WebhookVerificationError(reason: "invalid secret")
        }
        func header(_ name: String) -> String? { headers.first { $0.key.lowercased() == name }?.value }
        guard let id = header("webhook-id"), let ts = header("webhook-timestamp"), let sigs = header("webhook-signature") else {
            throw WebhookVerificationError(reason: "missing webhook-id, webhook-timestamp or webhook-signature header")
        }
        guard let seconds = Int64(ts) else { throw WebhookVerificationError(reason: "invalid webhook-timestamp") }
        let age = now.timeIntervalSince1970 - TimeInterval(seconds)
        if age > tolerance { throw WebhookVerificationError(reason: "timestamp too old") }
        if -age > tolerance { throw WebhookVerificationError(reason: "timestamp too far in the future") }
        var signed = Data("\(id).\(ts).".utf8)
        signed.append(payload)
        let matched = sigs.split(separator: " ").contains { sig in
            let parts = sig.split(separator: ",", maxSplits: 1)
            guard parts.count == 2, parts[0] == "v1", let got = Data(base64Encoded: String(parts[1])) else { return false }
            return HMAC<SHA256>.isValidAuthenticationCode(got, authenticating: signed, using: SymmetricKey(data: key))
        }
        guard matched else { throw WebhookVerificationError(reason: "no matching signature") }
        struct Envelope: Decodable {
            let id: String
            let type: String
            let created: String?
            let data: JSONValue?
        }
        let envelope: Envelope
        do {
            envelope = try JSONDecoder().decode(Envelope.self, from: payload)
        } catch {
            throw WebhookVerificationError(reason: "body is not a JSON event")
        }
        let dataJSON = try JSONEncoder().encode(envelope.data ?? .null)
        let data = try WebhookEventData.decode(kind: envelope.type, data: dataJSON)
        return WebhookEvent(id: envelope.id, type: envelope.type, created: envelope.created ?? "", data: data)
    }
}

/// A verified delivery, its data typed by kind.
public struct WebhookEvent: Sendable {
    public let id: String
    public let type: String
    public let created: String
    public let data: WebhookEventData
}
