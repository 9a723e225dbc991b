import http.server
import threading
import time
import unittest

import matchpoint


class _Slow(http.server.BaseHTTPRequestHandler):
    attempts = 0

    def do_GET(self):
        type(self).attempts += 1
        time.sleep(1.0)

    def log_message(self, *args):
        pass


class TimeoutTest(unittest.TestCase):
    def test_timeout_is_retried_then_an_error(self):
        """An endpoint that answers too late: each attempt times out, the
        timeout is retried like a lost connection, then raised."""
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        client = matchpoint.Client(base_url=f"http://127.0.0.1:{srv.server_address[1]}", api_key="mpk_test",
                                   timeout=0.2, max_retries=1)
        with self.assertRaises(matchpoint.APITimeoutError):
            client.get_me()
        self.assertEqual(_Slow.attempts, 2)


if __name__ == "__main__":
    unittest.main()
