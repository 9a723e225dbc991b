// The client's own logic against local HTTP servers: webhook signatures,
// retries and their limits, typed errors. No Matchpoint server needed.
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { createHmac, randomBytes } from "node:crypto";
import { Matchpoint, verifyWebhook, WebhookVerificationError, RateLimitError, ConflictError, APIConnectionError, createPkce } from "../dist/esm/index.js";
import { createHash } from "node:crypto";

const key = randomBytes(24);
const secret = "whsec_" + key.toString("base64");
const sign = (id, ts, body, k = key) => "v1," + createHmac("sha256", k).update(`${id}.${ts}.${body}`).digest("base64");
const body = JSON.stringify({ id: "whe_1", type: "match.created", created: "2026-01-01T09:00:00.000Z", data: { match: { id: "mch_1" } } });

test("verifyWebhook accepts a good signature and returns the event", async () => {
  const ts = Math.floor(Date.now() / 1000);
  const ev = await verifyWebhook(body, { "webhook-id": "whe_1", "webhook-timestamp": String(ts), "webhook-signature": sign("whe_1", ts, body) }, secret);
  assert.equal(ev.type, "match.created");
  // Headers objects, Buffers, a secret without its prefix, and several signatures (a rotation) work too.
  const h = new Headers({ "Webhook-Id": "whe_1", "Webhook-Timestamp": String(ts), "Webhook-Signature": `${sign("whe_1", ts, body, randomBytes(24))} ${sign("whe_1", ts, body)}` });
  assert.equal((await verifyWebhook(Buffer.from(body), h, key.toString("base64"))).data.match.id, "mch_1");
});

test("verifyWebhook refuses bad signatures, old and future timestamps, missing headers", async () => {
  const now = Math.floor(Date.now() / 1000);
  const hdr = (ts, sig = sign("whe_1", ts, body)) => ({ "webhook-id": "whe_1", "webhook-timestamp": String(ts), "webhook-signature": sig });
  const bad = async (h, payload = body, s = secret, msg) => assert.rejects(verifyWebhook(payload, h, s), (e) => e instanceof WebhookVerificationError && (!msg || msg.test(e.message)));
  await bad(hdr(now - 301), body, secret, /too old/);
  await bad(hdr(now + 301), body, secret, /future/);
  await bad(hdr(now), body.replace("mch_1", "mch_2"), secret, /no matching/);
  await bad(hdr(now, "v2," + sign("whe_1", now, body).slice(3)), body, secret, /no matching/);
  await bad({ "webhook-id": "whe_1", "webhook-timestamp": String(now) }, body, secret, /missing/);
  await bad(hdr("12x"), body, secret, /timestamp/);
  await bad(hdr(now), body, "whsec_", /secret/);
  // The window moves with the injected clock.
  const old = now - 3600;
  assert.equal((await verifyWebhook(body, hdr(old), secret, { now: () => new Date(old * 1000) })).id, "whe_1");
});

test("createPkce makes an S256 pair", async () => {
  const { codeVerifier, codeChallenge } = await createPkce();
  assert.match(codeVerifier, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(codeChallenge, createHash("sha256").update(codeVerifier).digest("base64url"));
});

/** A server answering with the given (status, headers, body) in turn, recording requests. */
async function scripted(answers) {
  const seen = [];
  const srv = http.createServer((req, res) => {
    seen.push({ method: req.method, url: req.url, headers: req.headers });
    const [status, headers, b] = answers[Math.min(seen.length - 1, answers.length - 1)];
    res.writeHead(status, { "Content-Type": "application/json", ...headers });
    res.end(JSON.stringify(b));
  });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${srv.address().port}`, seen, close: () => new Promise((r) => { srv.close(r); srv.closeAllConnections(); }) };
}

test("429 is retried after Retry-After; out of retries it is a RateLimitError", async () => {
  const s = await scripted([[429, { "Retry-After": "0" }, { status: 429, code: "rate_limited" }], [200, {}, { object: "user", id: "usr_1" }]]);
  try {
    const mp = new Matchpoint({ baseURL: s.url, apiKey: "mpk_test" });
    assert.equal((await mp.getMe()).id, "usr_1");
    assert.equal(s.seen.length, 2);
    assert.equal(s.seen[0].headers.authorization, "Bearer mpk_test");
  } finally {
    await s.close();
  }
  const t = await scripted([[429, { "Retry-After": "0" }, { status: 429, code: "rate_limited", request_id: "req_x" }]]);
  try {
    const mp = new Matchpoint({ baseURL: t.url, apiKey: "mpk_test", maxRetries: 1 });
    await assert.rejects(mp.getMe(), (e) => e instanceof RateLimitError && e.code === "rate_limited" && e.requestId === "req_x");
    assert.equal(t.seen.length, 2);
  } finally {
    await t.close();
  }
});

test("409 idempotency_in_progress is retried with the same key; other 409s are not", async () => {
  const s = await scripted([[409, { "Retry-After": "0" }, { status: 409, code: "idempotency_in_progress" }], [201, {}, { object: "match", id: "mch_1" }]]);
  try {
    const mp = new Matchpoint({ baseURL: s.url, apiKey: "k" });
    assert.equal((await mp.createMatch({ user_id: "usr_2" })).id, "mch_1");
    assert.equal(s.seen.length, 2);
    assert.equal(s.seen[0].headers["idempotency-key"], s.seen[1].headers["idempotency-key"]);
  } finally {
    await s.close();
  }
  const t = await scripted([[409, {}, { status: 409, code: "match_exists" }]]);
  try {
    const mp = new Matchpoint({ baseURL: t.url, apiKey: "k" });
    await assert.rejects(mp.createMatch({ user_id: "usr_2" }, { idempotencyKey: "mine" }), (e) => e instanceof ConflictError && e.code === "match_exists");
    assert.equal(t.seen.length, 1);
    assert.equal(t.seen[0].headers["idempotency-key"], "mine");
  } finally {
    await t.close();
  }
});

test("a refused connection is retried, then an APIConnectionError", async () => {
  const s = await scripted([[200, {}, {}]]);
  await s.close(); // nothing listens there now
  const mp = new Matchpoint({ baseURL: s.url, apiKey: "k", maxRetries: 1 });
  await assert.rejects(mp.getMe(), (e) => e instanceof APIConnectionError && e.status === 0);
});

test("readEvents parses server-sent events and skips comments", async () => {
  const { readEvents } = await import("../dist/esm/index.js");
  const chunks = [": matchpoint stream\nretry: 2000\n\nid: 7\nevent: message.sent\nda", "ta: {\"a\":1}\ndata: x\r\n\r\n: heartbeat\n\nid: 8\ndata: last\n\n"];
  const body = new ReadableStream({ start(c) { for (const ch of chunks) c.enqueue(new TextEncoder().encode(ch)); c.close(); } });
  const got = [];
  for await (const e of readEvents(new Response(body))) got.push(e);
  assert.deepEqual(got, [{ id: "7", event: "message.sent", data: '{"a":1}\nx' }, { id: "8", data: "last" }]);
});
