import base64
import hashlib
import hmac
import time
import unittest

import matchpoint
from matchpoint import webhooks

SECRET = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"
BODY = b'{"id":"whe_1","type":"user.created","created":"2026-01-01T00:00:00.000Z","data":{"user":{"id":"usr_1","username":"ann"}}}'


def sign(secret, msg_id, ts, body):
    key = base64.b64decode(secret[len("whsec_"):])
    mac = hmac.new(key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def headers(msg_id, ts, sig):
    return {"Webhook-Id": msg_id, "Webhook-Timestamp": str(ts), "Webhook-Signature": sig}


class WebhookTest(unittest.TestCase):
    def test_vector(self):
        # The Standard Webhooks scheme's published example.
        self.assertEqual(sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
                              b'{"test": 2432232314}'), "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        ev = webhooks.verify(b'{"test": 2432232314}', headers("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
                             "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="),
                             "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", now=1614265330)
        self.assertEqual(ev.raw, {"test": 2432232314})

    def test_typed_event(self):
        now = int(time.time())
        ev = webhooks.verify(BODY, headers("whe_1", now, "v1,bm90 " + sign(SECRET, "whe_1", now, BODY)), SECRET)
        self.assertEqual(ev.type, "user.created")
        self.assertIsInstance(ev.data, matchpoint.UserCreatedEventData)
        self.assertEqual(ev.data.user.username, "ann")

    def test_refusals(self):
        now = int(time.time())
        cases = {
            "old": headers("whe_1", now - 301, sign(SECRET, "whe_1", now - 301, BODY)),
            "future": headers("whe_1", now + 301, sign(SECRET, "whe_1", now + 301, BODY)),
            "other id": headers("whe_2", now, sign(SECRET, "whe_1", now, BODY)),
            "missing": {},
            "v2": headers("whe_1", now, "v2," + sign(SECRET, "whe_1", now, BODY)[3:]),
        }
        for name, h in cases.items():
            with self.subTest(name), self.assertRaises(matchpoint.WebhookVerificationError):
                webhooks.verify(BODY, h, SECRET)
        with self.assertRaises(matchpoint.WebhookVerificationError):
            webhooks.verify(BODY + b" ", headers("whe_1", now, sign(SECRET, "whe_1", now, BODY)), SECRET)


if __name__ == "__main__":
    unittest.main()
