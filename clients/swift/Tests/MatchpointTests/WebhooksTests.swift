import CryptoKit
import Foundation
import XCTest
@testable import Matchpoint

final class WebhooksTests: XCTestCase {
    let secret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"
    let body = Data(#"{"id":"whe_1","type":"user.created","created":"2026-01-01T00:00:00.000Z","data":{"user":{"id":"usr_1","username":"ann","first_name":"Ann","last_name":"Lee","location":"Paris","created_at":"2026-01-01T00:00:00.000Z","verified":false}}}"#.utf8)

    func sign(_ id: String, _ ts: Int, _ payload: Data, secret: String? = nil) -> String {
        let key = SymmetricKey(data: Data(base64Encoded: String((secret ?? self.secret).dropFirst(6)))!)
        var signed = Data("\(id).\(ts).".utf8)
        signed.append(payload)
        return "v1," + Data(HMAC<SHA256>.authenticationCode(for: signed, using: key)).base64EncodedString()
    }

    func headers(_ id: String, _ ts: Int, _ sig: String) -> [String: String] {
        ["Webhook-Id": id, "Webhook-Timestamp": String(ts), "Webhook-Signature": sig]
    }

    // The Standard Webhooks scheme's published example: our signing agrees.
    func testVector() {
        XCTAssertEqual(sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, Data(#"{"test": 2432232314}"#.utf8),
                            secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
                       "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    func testTypedEvent() throws {
        let now = Int(Date().timeIntervalSince1970)
        let event = try Webhooks.verify(payload: body, headers: headers("whe_1", now, sign("whe_1", now, body)), secret: secret)
        guard case .userCreated(let data) = event.data else { return XCTFail("data \(event.data)") }
        XCTAssertEqual(data.user.username, "ann")
    }

    func testRefusals() {
        let now = Int(Date().timeIntervalSince1970)
        let cases: [[String: String]] = [
            headers("whe_1", now - 301, sign("whe_1", now - 301, body)),
            headers("whe_1", now + 301, sign("whe_1", now + 301, body)),
            headers("whe_2", now, sign("whe_1", now, body)),
            [:],
        ]
        for h in cases {
            XCTAssertThrowsError(try Webhooks.verify(payload: body, headers: h, secret: secret))
        }
    }
}
