import time
import unittest
from email.utils import formatdate

from matchpoint import _client
from matchpoint._errors import error_for


class RetryTest(unittest.TestCase):
    def test_retry_after(self):
        self.assertEqual(_client._backoff(0, "3"), 3.0)
        self.assertTrue(8 <= _client._backoff(0, formatdate(time.time() + 10, usegmt=True)) <= 10)
        self.assertEqual(_client._backoff(0, "86400"), _client.MAX_RETRY_AFTER)
        for attempt, want in enumerate([0.5, 1, 2, 4, 8, 8]):
            d = _client._backoff(attempt, None)
            self.assertTrue(want * 0.75 <= d <= want, (attempt, d))

    def test_retryable(self):
        cases = [(408, None, True), (429, None, True), (500, None, True), (503, None, True),
                 (409, "idempotency_in_progress", True), (409, "conflict", False),
                 (400, None, False), (401, None, False), (404, None, False), (422, None, False)]
        for status, code, want in cases:
            self.assertEqual(_client._retryable(error_for(status, {"code": code}, {})), want, (status, code))

    def test_error_classes(self):
        import matchpoint
        for status, cls in [(400, matchpoint.BadRequestError), (401, matchpoint.AuthenticationError),
                            (403, matchpoint.PermissionDeniedError), (404, matchpoint.NotFoundError),
                            (409, matchpoint.ConflictError), (422, matchpoint.UnprocessableEntityError),
                            (429, matchpoint.RateLimitError), (502, matchpoint.InternalServerError)]:
            e = error_for(status, {"code": "x", "param": "p", "request_id": "req_1"}, {})
            self.assertIsInstance(e, cls)
            self.assertIsInstance(e, matchpoint.APIError)
            self.assertEqual((e.status, e.code, e.param, e.request_id), (status, "x", "p", "req_1"))


if __name__ == "__main__":
    unittest.main()
