"""The contract scenario and the coverage test, against the live service
named by MATCHPOINT_BASE_URL (test.sh starts one when none is given)."""

import datetime
import http.server
import json
import os
import ssl
import threading
import time
import unittest
import urllib.error
import urllib.request

import matchpoint
from matchpoint import webhooks
from matchpoint.oauth import TokenSet

from .browser import sign_in

BASE = os.environ.get("MATCHPOINT_BASE_URL", "")
live = unittest.skipUnless(BASE, "MATCHPOINT_BASE_URL is not set: run clients/python/test.sh, which starts a service")


def env(name):
    v = os.environ.get(name)
    if not v:
        raise AssertionError(f"{name} is not set")
    return v


def wait_for(what, cond, limit=30):
    deadline = time.time() + limit
    while True:
        got = cond()
        if got:
            return got
        if time.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


class _Receiver(http.server.BaseHTTPRequestHandler):
    """The webhook endpoint: echoes challenges, keeps deliveries."""

    got = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            kind = json.loads(body).get("type")
        except ValueError:
            kind = None
        if kind == "webhook.verification":
            out = json.dumps({"challenge": json.loads(body)["challenge"]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
            return
        type(self).got.append((dict(self.headers.items()), body, kind))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def serve(handler, tls=False):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(env("MATCHPOINT_TEST_TLS_CERT"), env("MATCHPOINT_TEST_TLS_KEY"))
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


@live
class CoverageTest(unittest.TestCase):
    def test_every_operation_has_a_method(self):
        with urllib.request.urlopen(BASE + "/openapi.json") as res:
            doc = json.load(res)
        ids = [op["operationId"] for item in doc["paths"].values() for verb, op in item.items()
               if isinstance(op, dict) and "operationId" in op]
        self.assertTrue(ids)
        missing = [i for i in ids if not callable(getattr(matchpoint.Client, matchpoint.OPERATIONS.get(i, "-"), None))]
        self.assertEqual(missing, [], "operations without a method: regenerate with go run ./clients/gen")


@live
class ContractScenario(unittest.TestCase):
    def test_scenario(self):
        api_key = env("MATCHPOINT_API_KEY")
        cfg = matchpoint.OAuthConfig(client_id=env("MATCHPOINT_CLIENT_ID"), client_secret=os.environ.get("MATCHPOINT_CLIENT_SECRET"),
                                     redirect_uri=env("MATCHPOINT_REDIRECT_URI"),
                                     scopes=["read", "write", "profile", "matching", "events"])
        owner = matchpoint.Client(base_url=BASE, api_key=api_key)

        # OAuth: the code flow with PKCE, signed in on the service's pages.
        pk, state = matchpoint.pkce(), matchpoint.new_state()
        callback = sign_in(BASE, owner.authorize_url(cfg, state, pk), env("MATCHPOINT_USER_LOGIN"), env("MATCHPOINT_USER_PASSWORD"))
        code = matchpoint.parse_callback(callback, state)
        tokens = owner.exchange_code(cfg, code, pk.verifier)
        self.assertTrue(tokens.access_token and tokens.refresh_token and tokens.expires_at)
        # Expired: refreshed before the first call, the new set persisted.
        saved = []
        expired = TokenSet(tokens.access_token, tokens.refresh_token, tokens.scope, time.time() - 60)
        member = matchpoint.Client(base_url=BASE, oauth=cfg, tokens=expired, on_refresh=saved.append)
        member_me = member.get_me()
        self.assertEqual(len(saved), 1)
        self.assertNotEqual(saved[0].access_token, tokens.access_token)
        # Refused (401): refreshed once for concurrent calls.
        refused = TokenSet("mpa_revoked", member.tokens.refresh_token, None, time.time() + 3600)
        member = matchpoint.Client(base_url=BASE, oauth=cfg, tokens=refused, on_refresh=saved.append)
        errors = []

        def call():
            try:
                member.get_me()
            except Exception as e:  # noqa: BLE001
                errors.append(e)
        threads = [threading.Thread(target=call) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(saved), 2)

        # Profile read and update.
        owner_me = owner.get_me()
        place = dict(location="Paris", sports=["tennis"], skill_levels={"tennis": "intermediate"}, travel_radius_km=50)
        updated = owner.update_me(**place)
        self.assertEqual((updated.id, updated.location, updated.sports), (owner_me.id, "Paris", ["tennis"]))
        member_me = member.update_me(bio="Plays on Sundays", **place)
        self.assertEqual(member_me.bio, "Plays on Sundays")

        # A webhook subscription, verified by its challenge.
        _Receiver.got = []
        rcv = serve(_Receiver, tls=True)
        self.addCleanup(rcv.server_close)
        self.addCleanup(rcv.shutdown)
        hook = owner.create_webhook(url=f"https://127.0.0.1:{rcv.server_address[1]}/hook", events=["match.accepted"],
                                    description="contract")
        self.assertTrue(hook.secret.startswith("whsec_"))
        wait_for("the subscription's verification", lambda: owner.get_webhook(hook.id).status == "active")

        # Match: find the member, ask, the member accepts.
        found = [r.user.id for r in owner.find_matches_iter(sports=["tennis"], max_distance=50)]
        self.assertIn(member_me.id, found)
        match = owner.create_match(user_id=member_me.id, sport="tennis")
        self.assertEqual(member.accept_match(match.id).status, "accepted")

        # A conversation with a message: the owner writes, the member reads it.
        conv = owner.create_conversation(member_ids=[member_me.id])
        sent = owner.send_message(conv.id, body="Sunday at ten?")
        read = member.list_messages(conv.id)
        self.assertEqual([(m.id, m.body, m.sender_id) for m in read.data], [(sent.id, "Sunday at ten?", owner_me.id)])

        # The delivery, checked with the library's verify.
        headers, body, _ = wait_for("the match.accepted delivery",
                                    lambda: next((g for g in _Receiver.got if g[2] == "match.accepted"), None))
        ev = webhooks.verify(body, headers, hook.secret)
        self.assertIsInstance(ev.data, matchpoint.MatchAcceptedEventData)
        self.assertEqual(ev.data.match.id, match.id)
        with self.assertRaises(matchpoint.WebhookVerificationError):
            webhooks.verify(body.replace(match.id.encode(), b"mch_other"), headers, hook.secret)

        # An event with an RSVP.
        def draft(title, days):
            return draft_with(owner, title, days)
        event = draft("Doubles at Roland", 3)
        rsvp = member.put_rsvp(event.id, status="going")
        self.assertEqual((rsvp.status, rsvp.user_id), ("going", member_me.id))
        self.assertEqual(owner.get_event(event.id).going_count, event.going_count + 1)

        # A list walked page by page.
        want = {event.id, draft("Practice", 4).id, draft("Practice", 5).id}
        pages = []
        page = owner.list_my_events(limit=1, role="creator")
        pages.append(page)
        while page.has_more:
            page = owner.list_my_events(limit=1, role="creator", cursor=page.next_cursor)
            pages.append(page)
        self.assertEqual(len(pages), 3)
        self.assertEqual({e.id for p in pages for e in p.data}, want)
        self.assertEqual({e.id for e in owner.list_my_events_iter(limit=1, role="creator")}, want)

        # A 404 and a 422 as typed errors.
        with self.assertRaises(matchpoint.NotFoundError) as nf:
            owner.get_event("evt_0000000000000000000000000")
        self.assertEqual(nf.exception.status, 404)
        self.assertTrue(nf.exception.code and nf.exception.request_id)
        with self.assertRaises(matchpoint.UnprocessableEntityError) as ue:
            owner.update_me(username="x")
        self.assertEqual((ue.exception.status, ue.exception.param), (422, "username"))

        # Retries: a proxy in front of the service answers the first GET
        # with 503 and the first PATCH with 429 (Retry-After: 1, not
        # forwarded), and loses the answer of the first POST (forwarded,
        # then answered 503): its retry must carry the same Idempotency-Key,
        # so the service replays its answer instead of making a second event.
        proxy = serve(_FlakyProxy)
        _FlakyProxy.seen = []
        _FlakyProxy.base = BASE
        self.addCleanup(proxy.server_close)
        self.addCleanup(proxy.shutdown)
        flaky = matchpoint.Client(base_url=f"http://127.0.0.1:{proxy.server_address[1]}", api_key=api_key)
        start = time.time()
        self.assertEqual(flaky.get_me().id, owner_me.id)
        self.assertEqual(_FlakyProxy.count("GET"), 2)
        self.assertGreaterEqual(time.time() - start, 1.0)
        start = time.time()
        flaky.update_me(bio="Retried")
        self.assertEqual(_FlakyProxy.count("PATCH"), 2)
        self.assertGreaterEqual(time.time() - start, 1.0)
        retried = draft_with(flaky, "Retried once", 6)
        keys = [h.get("Idempotency-Key") for m, h in _FlakyProxy.seen if m == "POST"]
        self.assertEqual(len(keys), 2)
        self.assertTrue(keys[0])
        self.assertEqual(keys[0], keys[1])
        made = [e.id for e in owner.list_my_events_iter(role="creator") if e.title == "Retried once"]
        self.assertEqual(made, [retried.id])
        self.assertTrue(_FlakyProxy.seen[0][1].get("User-Agent", "").startswith("matchpoint-python/"))
        _FlakyProxy.seen = []
        with self.assertRaises(matchpoint.InternalServerError) as se:
            matchpoint.Client(base_url=f"http://127.0.0.1:{proxy.server_address[1]}", api_key=api_key, max_retries=0).get_me()
        self.assertEqual(se.exception.status, 503)


class _FlakyProxy(http.server.BaseHTTPRequestHandler):
    """Forwards to the service, failing the first request of some methods."""

    seen = []
    base = ""

    @classmethod
    def count(cls, method):
        return sum(1 for m, _ in cls.seen if m == method)

    def _fail(self, status):
        out = json.dumps({"type": "about:blank", "title": "proxy", "status": status, "code": f"proxy_{status}"}).encode()
        self.send_response(status)
        self.send_header("Retry-After", "1")
        self.send_header("Content-Type", "application/problem+json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def _forward(self, body):
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
        req = urllib.request.Request(self.base + self.path, data=body, method=self.command, headers=headers)
        try:
            res = urllib.request.urlopen(req)
        except urllib.error.HTTPError as e:
            res = e
        with res:
            return res.status if hasattr(res, "status") else res.code, res.headers, res.read()

    def _handle(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
        type(self).seen.append((self.command, dict(self.headers.items())))
        first = type(self).count(self.command) == 1
        if first and self.command == "GET":
            return self._fail(503)
        if first and self.command == "PATCH":
            return self._fail(429)
        status, headers, out = self._forward(body)
        if first and self.command == "POST":
            return self._fail(503)  # the answer is lost
        self.send_response(status)
        for k in ("Content-Type", "Request-Id", "Idempotent-Replayed"):
            if headers.get(k):
                self.send_header(k, headers[k])
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

    def log_message(self, *args):
        pass


def draft_with(client, title, days):
    at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=days)
    return client.create_event(title=title, sport="tennis", location="Paris", max_participants=4,
                               date=at.replace(microsecond=0).isoformat().replace("+00:00", "Z"))


if __name__ == "__main__":
    unittest.main()
