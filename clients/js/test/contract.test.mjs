// The contract scenario against a live server (test.sh starts one, or names
// one with MATCHPOINT_BASE_URL): a person signs in through the OAuth code
// flow with PKCE in a browser and uses the API through the client; the
// Enterprise account of MATCHPOINT_API_KEY is the other person.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import Matchpoint, { NotFoundError, UnprocessableEntityError, MatchpointError, verifyWebhook, WebhookVerificationError, readEvents } from "../dist/esm/index.js";
import { env, Browser, startReceiver, startProxy } from "./helpers.mjs";

const E = env();
const base = E.MATCHPOINT_BASE_URL;
const tokenSets = [];
const person = new Matchpoint({
  baseURL: base,
  oauth: { clientId: E.MATCHPOINT_CLIENT_ID, clientSecret: E.MATCHPOINT_CLIENT_SECRET, redirectUri: E.MATCHPOINT_REDIRECT_URI, onTokens: (t) => tokenSets.push(t) },
});
const partner = new Matchpoint({ baseURL: base, apiKey: E.MATCHPOINT_API_KEY });
const run = Date.now().toString(36);
let receiver, hook, me, partnerMe, match, event;

before(async () => {
  receiver = await startReceiver(E.MATCHPOINT_TEST_TLS_CERT, E.MATCHPOINT_TEST_TLS_KEY);
});
after(async () => {
  if (hook) await partner.deleteWebhook(hook.id).catch(() => {});
  await receiver?.close();
});

test("OAuth code flow with PKCE in a browser, then a refresh", async () => {
  const auth = await person.oauth.authorizeURL({ scope: "read write profile matching events" });
  assert.match(auth.url, /code_challenge_method=S256/);
  const callback = await new Browser(base).authorize(auth.url, E.MATCHPOINT_USER_LOGIN, E.MATCHPOINT_USER_PASSWORD);
  assert.ok(callback.startsWith(E.MATCHPOINT_REDIRECT_URI), callback);
  assert.throws(() => person.oauth.parseCallback(callback, "another-state"), MatchpointError);
  const code = person.oauth.parseCallback(callback, auth.state);
  // A wrong verifier is refused: PKCE is checked.
  await assert.rejects(person.oauth.exchangeCode(code, "x".repeat(43)), (e) => e.status === 400);
  const auth2 = await person.oauth.authorizeURL({ scope: "read write profile matching events" });
  const code2 = person.oauth.parseCallback(await new Browser(base).authorize(auth2.url, E.MATCHPOINT_USER_LOGIN, E.MATCHPOINT_USER_PASSWORD), auth2.state);
  const ts = await person.oauth.exchangeCode(code2, auth2.codeVerifier);
  assert.ok(ts.access_token && ts.refresh_token && ts.expires_at > Date.now());
  assert.equal(tokenSets.length, 1);
  me = await person.getMe();
  assert.equal(me.object, "user");

  // Concurrent refreshes share one token request.
  const [a, b] = await Promise.all([person.oauth.refresh(), person.oauth.refresh()]);
  assert.equal(a.access_token, b.access_token);
  assert.notEqual(a.access_token, ts.access_token);
  assert.equal(tokenSets.length, 2);
  // A token that expired on the client's clock is refreshed before the call.
  person.tokenSet.expires_at = Date.now() - 1000;
  assert.equal((await person.getMe()).id, me.id);
  assert.equal(tokenSets.length, 3);
  // A revoked access token answers 401: the client refreshes once and retries.
  const stale = person.tokenSet.access_token;
  await person.oauthRevoke({ token: stale, token_type_hint: "access_token", client_id: E.MATCHPOINT_CLIENT_ID, client_secret: E.MATCHPOINT_CLIENT_SECRET });
  assert.equal((await person.getMe()).id, me.id);
  assert.equal(tokenSets.length, 4);
  assert.notEqual(person.tokenSet.access_token, stale);
});

test("profile read and update", async () => {
  assert.ok(me, "needs the OAuth step");
  const updated = await person.updateMe({ first_name: "Ada" + run, sports: ["tennis"], skill_levels: { tennis: "intermediate" }, latitude: 48.8566, longitude: 2.3522, travel_radius_km: 50 });
  assert.equal(updated.first_name, "Ada" + run);
  assert.deepEqual(updated.sports, ["tennis"]);
  assert.equal((await person.getMe()).first_name, "Ada" + run);
  partnerMe = await partner.updateMe({ first_name: "Grace" + run, sports: ["tennis"], skill_levels: { tennis: "intermediate" }, latitude: 48.8606, longitude: 2.3376, travel_radius_km: 50 });
  assert.equal(partnerMe.first_name, "Grace" + run);
  const pub = await person.getUser(partnerMe.id);
  assert.equal(pub.id, partnerMe.id);
});

test("a webhook subscription is verified", async () => {
  hook = await partner.createWebhook({ url: receiver.url, events: ["match.created", "match.accepted", "event.rsvp", "message.sent"], description: "js contract " + run });
  assert.match(hook.secret, /^whsec_/);
  for (let i = 0; i < 100 && hook.status !== "active"; i++) {
    await new Promise((r) => setTimeout(r, 100));
    hook = { ...(await partner.getWebhook(hook.id)), secret: hook.secret };
  }
  assert.equal(hook.status, "active", JSON.stringify(hook.last_verification));
});

test("match find, a request, accepted by the other person; the delivery verifies", async () => {
  assert.ok(partnerMe && hook, "needs the earlier steps");
  let found = false;
  for await (const rec of person.findMatchesAutoPaging({ sports: ["tennis"], limit: 50 })) {
    if (rec.user.id === partnerMe.id) {
      found = true;
      break;
    }
  }
  assert.ok(found, "the partner is among the recommendations");
  match = await person.createMatch({ user_id: partnerMe.id, sport: "tennis", message: "A game on Saturday? " + run });
  assert.equal(match.status, "pending");
  const accepted = await partner.acceptMatch(match.id);
  assert.equal(accepted.status, "accepted");
  assert.equal((await person.getMatch(match.id)).status, "accepted");

  const isAccepted = (d) => JSON.parse(d.body.toString()).type === "match.accepted";
  const d = await receiver.waitFor(isAccepted);
  const ev = await verifyWebhook(d.body, d.headers, hook.secret);
  assert.equal(ev.type, "match.accepted");
  if (ev.type === "match.accepted") assert.equal(ev.data.match.id, match.id);
  // The same body with one byte changed, or with another secret, is refused.
  const tampered = Buffer.from(d.body.toString().replace(match.id, match.id.slice(0, -1) + "x"));
  await assert.rejects(verifyWebhook(tampered, d.headers, hook.secret), WebhookVerificationError);
  await assert.rejects(verifyWebhook(d.body, d.headers, "whsec_" + Buffer.from("another secret").toString("base64")), WebhookVerificationError);
});

test("a conversation with a message, on the stream; its delivery verifies", async () => {
  assert.ok(match && hook, "needs the match and webhook steps");
  const conv = await person.createConversation({ member_ids: [partnerMe.id], title: "Saturday " + run });
  assert.match(conv.id, /^cnv_/);
  // The other person follows the real-time stream while the message is sent.
  const live = await partner.stream();
  assert.match(live.headers.get("content-type"), /^text\/event-stream/);
  const text = "See you at 10 on court 3? " + run;
  const sent = await person.sendMessage(conv.id, { body: text });
  assert.equal(sent.body, text);
  let streamed;
  const timer = setTimeout(() => live.body.cancel(), 20000);
  for await (const e of readEvents(live)) {
    if (e.event === "message.sent" && e.data.includes(sent.id)) {
      streamed = e;
      break;
    }
  }
  clearTimeout(timer);
  assert.ok(streamed && streamed.id, "message.sent arrived on the stream");
  assert.equal(JSON.parse(streamed.data).body ?? JSON.parse(streamed.data).message?.body, text);
  const page = await partner.listMessages(conv.id, { limit: 10 });
  assert.ok(page.data.some((m) => m.id === sent.id && m.body === text), JSON.stringify(page));
  assert.equal((await partner.getMessage(sent.id)).body, text);
  const convs = [];
  for await (const c of partner.listConversationsAutoPaging({ limit: 1 })) convs.push(c.id);
  assert.ok(convs.includes(conv.id));

  const d = await receiver.waitFor((x) => JSON.parse(x.body.toString()).type === "message.sent");
  const ev = await verifyWebhook(d.body, d.headers, hook.secret);
  assert.equal(ev.type, "message.sent");
  if (ev.type === "message.sent") assert.equal(ev.data.message.id, sent.id);
});

test("an event with an RSVP; a list walked page by page", async () => {
  assert.ok(partnerMe, "needs the profile step");
  const when = new Date(Date.now() + 7 * 86400e3);
  const created = [];
  for (let i = 0; i < 3; i++) {
    created.push(await person.createEvent({ title: `Doubles ${run} #${i}`, sport: "tennis", location: "Paris", latitude: 48.85, longitude: 2.35, date: new Date(when.getTime() + i * 3600e3).toISOString(), max_participants: 4 }));
  }
  event = created[0];
  const rsvp = await partner.putRsvp(event.id, { status: "going" });
  assert.equal(rsvp.status, "going");
  assert.equal((await partner.getRsvp(event.id)).status, "going");
  const attendees = await person.listAttendees(event.id);
  assert.ok(attendees.data.some((a) => a.user?.id === partnerMe.id || a.user_id === partnerMe.id), JSON.stringify(attendees));

  // One item per page: the iterator follows next_cursor.
  const pages = [];
  let cursor;
  do {
    const page = await person.listMyEvents({ role: "creator", limit: 1, cursor });
    pages.push(page);
    cursor = page.has_more ? page.next_cursor : undefined;
  } while (cursor);
  assert.ok(pages.length >= 3, `${pages.length} pages`);
  const walked = [];
  for await (const e of person.listMyEventsAutoPaging({ role: "creator", limit: 1 })) walked.push(e.id ?? e.event?.id);
  for (const c of created) assert.ok(walked.includes(c.id), `${c.id} walked`);
  assert.equal(walked.length, new Set(walked).size, "no item twice");
});

test("a 404 and a 422 are typed errors", async () => {
  await assert.rejects(person.getEvent("evt_00000000000000000000000000"), (e) => {
    assert.ok(e instanceof NotFoundError && e instanceof MatchpointError);
    assert.equal(e.status, 404);
    assert.equal(e.code, "not_found");
    assert.match(e.requestId, /^req_/);
    assert.equal(e.problem.status, 404);
    return true;
  });
  await assert.rejects(person.findMatches({ sports: ["quidditch"] }), (e) => {
    assert.ok(e instanceof UnprocessableEntityError);
    assert.equal(e.status, 422);
    assert.equal(e.code, "unknown_sport");
    assert.equal(e.param, "sports[0]");
    return true;
  });
});

test("a 503 and a 429 are retried after Retry-After, a POST with the same Idempotency-Key", async () => {
  const proxy = await startProxy(base);
  try {
    const viaProxy = new Matchpoint({ baseURL: proxy.url, apiKey: E.MATCHPOINT_API_KEY });
    proxy.fail(1);
    const t0 = Date.now();
    assert.equal((await viaProxy.getMe()).id, partnerMe.id);
    assert.ok(Date.now() - t0 >= 900, "waited for Retry-After");
    assert.equal(proxy.seen.length, 2);
    // A 429 likewise.
    proxy.fail(1, 429);
    const t1 = Date.now();
    assert.equal((await viaProxy.getMe()).id, partnerMe.id);
    assert.ok(Date.now() - t1 >= 900, "waited for Retry-After");
    assert.equal(proxy.seen.length, 4);

    // The server created the event, the answer was lost: the retry replays it.
    const before = (await partner.listMyEvents({ role: "creator", limit: 100 })).data.length;
    proxy.fail(1);
    const ev = await viaProxy.createEvent({ title: "Retried " + run, sport: "tennis", location: "Paris", latitude: 48.85, longitude: 2.35, date: new Date(Date.now() + 86400e3).toISOString(), max_participants: 2 });
    const posts = proxy.seen.filter((s) => s.method === "POST");
    assert.equal(posts.length, 2);
    assert.ok(posts[0].headers["idempotency-key"]);
    assert.equal(posts[0].headers["idempotency-key"], posts[1].headers["idempotency-key"]);
    const afterList = (await partner.listMyEvents({ role: "creator", limit: 100 })).data;
    assert.equal(afterList.length, before + 1);
    assert.ok(afterList.some((e) => (e.id ?? e.event?.id) === ev.id));
    assert.match(proxy.seen[0].headers["user-agent"], /^matchpoint-js\/\d/);

    // Out of retries: the 503 is thrown as a typed error.
    const noRetry = new Matchpoint({ baseURL: proxy.url, apiKey: E.MATCHPOINT_API_KEY, maxRetries: 0 });
    proxy.fail(1);
    await assert.rejects(noRetry.getMe(), (e) => e.status === 503 && e.name === "InternalServerError");
  } finally {
    await proxy.close();
  }
});
