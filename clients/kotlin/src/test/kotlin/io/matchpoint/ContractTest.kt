package io.matchpoint

import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.MethodOrderer
import org.junit.jupiter.api.Order
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.TestMethodOrder
import java.time.Instant
import java.util.concurrent.Callable
import java.util.concurrent.Executors

/**
 * The contract scenario against a live server (test.sh starts one, or names
 * one with MATCHPOINT_BASE_URL): a person signs in through the OAuth code
 * flow with PKCE in a browser; the Enterprise account of MATCHPOINT_API_KEY
 * is the other person. Steps run in order and share what they made.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation::class)
class ContractTest {
    private val base = Env.baseUrl
    private val tokenSets = java.util.Collections.synchronizedList(ArrayList<TokenSet>())
    private val person = Matchpoint(base, null, ClientOptions(oauth = OAuthClient(Env.clientId, Env.clientSecret, Env.redirectUri) { tokenSets.add(it) }))
    private val partner = Matchpoint(base, Env.apiKey)
    private val run = java.lang.Long.toString(System.currentTimeMillis(), 36)
    private val receiver = Receiver(Env.tlsCert, Env.tlsKey)
    private var me: Profile? = null
    private var partnerMe: Profile? = null
    private var hook: Webhook? = null
    private var secret: String? = null
    private var matchId: String? = null

    @AfterAll
    fun cleanup() {
        hook?.id?.let { try { partner.deleteWebhook(it) } catch (e: Exception) {} }
        receiver.close()
    }

    @Test @Order(1)
    fun oauthCodeFlowWithPkceAndRefresh() {
        val scope = "read write profile matching events"
        val auth = person.oauth.authorizeUrl(scope)
        assertTrue(auth.url.contains("code_challenge_method=S256"))
        val callback = Browser(base).authorize(auth.url, Env.login, Env.password)
        assertTrue(callback.startsWith(Env.redirectUri), callback)
        assertThrows(MatchpointException::class.java) { person.oauth.parseCallback(callback, "another-state") }
        val code = person.oauth.parseCallback(callback, auth.state)
        // A wrong verifier is refused: PKCE is checked.
        val bad = assertThrows(OAuthException::class.java) { person.oauth.exchangeCode(code, "x".repeat(43)) }
        assertEquals(400, bad.status)

        val auth2 = person.oauth.authorizeUrl(scope)
        val code2 = person.oauth.parseCallback(Browser(base).authorize(auth2.url, Env.login, Env.password), auth2.state)
        val ts = person.oauth.exchangeCode(code2, auth2.codeVerifier)
        assertNotNull(ts.refreshToken)
        assertTrue(ts.expiresAt!! > System.currentTimeMillis())
        assertEquals(1, tokenSets.size)
        me = person.getMe()
        assertEquals("user", me!!.`object`)

        // Threads refreshing the same access token share one token request,
        // however the pool schedules them.
        val seen = person.tokenSet!!.accessToken
        val pool = Executors.newFixedThreadPool(4)
        val got = pool.invokeAll((1..4).map { Callable { person.oauth.refresh(seen) } }).map { it.get().accessToken }
        pool.shutdown()
        assertEquals(1, got.toSet().size)
        assertNotEquals(ts.accessToken, got[0])
        assertEquals(2, tokenSets.size)
        // A token that expired on the client's clock is refreshed before the call.
        person.setTokens(person.tokenSet!!.copy(expiresAt = System.currentTimeMillis() - 1000))
        assertEquals(me!!.id, person.getMe().id)
        assertEquals(3, tokenSets.size)
        // A revoked access token answers 401: the client refreshes once and retries.
        val stale = person.tokenSet!!.accessToken
        person.oauthRevoke(mapOf("token" to stale, "token_type_hint" to "access_token", "client_id" to Env.clientId, "client_secret" to Env.clientSecret))
        assertEquals(me!!.id, person.getMe().id)
        assertEquals(4, tokenSets.size)
        assertNotEquals(stale, person.tokenSet!!.accessToken)
    }

    @Test @Order(2)
    fun profileReadAndUpdate() {
        assertNotNull(me, "needs the OAuth step")
        val updated = person.updateMe(ProfilePatch(firstName = "Ada$run", sports = listOf("tennis"), skillLevels = mapOf("tennis" to "intermediate"), latitude = 48.8566, longitude = 2.3522, travelRadiusKm = 50.0))
        assertEquals("Ada$run", updated.firstName)
        assertEquals(listOf("tennis"), updated.sports)
        assertEquals("Ada$run", person.getMe().firstName)
        partnerMe = partner.updateMe(ProfilePatch(firstName = "Grace$run", sports = listOf("tennis"), skillLevels = mapOf("tennis" to "intermediate"), latitude = 48.8606, longitude = 2.3376, travelRadiusKm = 50.0))
        assertEquals("Grace$run", partnerMe!!.firstName)
        assertEquals(partnerMe!!.id, person.getUser(partnerMe!!.id!!).id)
    }

    @Test @Order(3)
    fun webhookSubscriptionIsVerified() {
        var h = partner.createWebhook(CreateWebhookRequest(url = receiver.url, events = listOf("match.created", "match.accepted", "event.rsvp", "message.sent"), description = "kotlin contract $run"))
        secret = h.secret
        assertTrue(secret!!.startsWith("whsec_"))
        var i = 0
        while (h.status != "active" && i++ < 100) {
            Thread.sleep(100)
            h = partner.getWebhook(h.id!!)
        }
        hook = h
        assertEquals("active", h.status, h.lastVerification?.toJson()?.toString())
    }

    @Test @Order(4)
    fun matchFoundRequestedAcceptedAndDeliveryVerified() {
        val other = partnerMe ?: throw AssertionError("needs the profile step")
        assertNotNull(secret, "needs the webhook step")
        assertTrue(person.findMatchesAutoPaging(FindCriteria(sports = listOf("tennis"), limit = 50)).any { it.user?.id == other.id }, "the partner is among the recommendations")
        val match = person.createMatch(CreateMatchRequest(userId = other.id, sport = "tennis", message = "A game on Saturday? $run"))
        assertEquals("pending", match.status)
        assertEquals("accepted", partner.acceptMatch(match.id!!).status)
        assertEquals("accepted", person.getMatch(match.id!!).status)
        matchId = match.id

        val d = receiver.waitFor { it.json.optString("type") == "match.accepted" }
        val ev = Webhooks.verify(d.body, d.headers, secret!!)
        assertTrue(ev is MatchAcceptedEvent, ev.javaClass.name)
        assertEquals(match.id, (ev as MatchAcceptedEvent).data!!.match!!.id)
        // One byte changed, or another secret: refused.
        val tampered = String(d.body, Charsets.UTF_8).replace(match.id!!, match.id!!.dropLast(1) + "x")
        assertThrows(WebhookVerificationException::class.java) { Webhooks.verify(tampered, d.headers, secret!!) }
        assertThrows(WebhookVerificationException::class.java) { Webhooks.verify(d.body, d.headers, "whsec_" + java.util.Base64.getEncoder().encodeToString("another".toByteArray())) }
    }

    @Test @Order(5)
    fun conversationWithAMessageOnTheStreamAndItsDeliveryVerified() {
        val other = partnerMe ?: throw AssertionError("needs the profile step")
        assertNotNull(matchId, "needs the match step")
        val conv = person.createConversation(ConversationDraft(memberIds = listOf(other.id!!), title = "Saturday $run"))
        assertTrue(conv.id!!.startsWith("cnv_"))
        // The other person follows the real-time stream while the message is sent.
        val live = partner.stream(options = RequestOptions(timeoutMillis = 20_000))
        val text = "See you at 10 on court 3? $run"
        val sent = person.sendMessage(conv.id!!, MessageDraft(body = text))
        assertEquals(text, sent.body)
        val streamed = live.use { s -> s.asSequence().first { it.event == "message.sent" && it.data.contains(sent.id!!) } }
        assertNotNull(streamed.id)
        val data = org.json.JSONObject(streamed.data)
        assertEquals(text, data.optJSONObject("message")?.optString("body") ?: data.optString("body"))
        val page = partner.listMessages(conv.id!!, limit = 10)
        assertTrue(page.data!!.any { it.id == sent.id && it.body == text }, page.toJson().toString())
        assertEquals(text, partner.getMessage(sent.id!!).body)
        assertTrue(partner.listConversationsAutoPaging(limit = 1).any { it.id == conv.id })

        val d = receiver.waitFor { it.json.optString("type") == "message.sent" }
        val ev = Webhooks.verify(d.body, d.headers, secret!!)
        assertTrue(ev is MessageSentEvent, ev.javaClass.name)
        assertEquals(sent.id, (ev as MessageSentEvent).data!!.message!!.id)
    }

    @Test @Order(6)
    fun eventWithRsvpAndAListWalkedPageByPage() {
        val other = partnerMe ?: throw AssertionError("needs the profile step")
        val whenAt = Instant.now().plusSeconds(7 * 86400)
        val created = (0..2).map { i ->
            person.createEvent(EventDraft(title = "Doubles $run #$i", sport = "tennis", location = "Paris", latitude = 48.85, longitude = 2.35, date = whenAt.plusSeconds(i * 3600L).toString(), maxParticipants = 4))
        }
        val event = created[0]
        // The other person answers over HttpURLConnection, the transport Android uses.
        val android = Matchpoint(base, Env.apiKey, ClientOptions(transport = UrlConnectionTransport()))
        assertEquals("going", android.putRsvp(event.id!!, PutRsvpRequest(status = "going")).status)
        assertEquals("going", android.getRsvp(event.id!!).status)
        val nf = assertThrows(NotFoundException::class.java) { android.getRsvp("evt_00000000000000000000000000") }
        assertEquals("not_found", nf.code)
        if (System.getProperty("java.vm.vendor")?.contains("Android") != true) {
            // The JVM's HttpURLConnection refuses PATCH at once (no retries); Android's sends it.
            assertThrows(UnsupportedOperationException::class.java) { android.updateMe(ProfilePatch(bio = "x")) }
        }
        val attendees = person.listAttendees(event.id!!)
        assertTrue(attendees.data!!.any { it.user?.id == other.id }, attendees.toJson().toString())

        // One item per page, by hand and with the iterator.
        var pages = 0
        var cursor: String? = null
        do {
            val page = person.listMyEvents(role = "creator", limit = 1, cursor = cursor)
            pages++
            cursor = if (page.hasMore == true) page.nextCursor else null
        } while (cursor != null)
        assertTrue(pages >= 3, "$pages pages")
        val walked = person.listMyEventsAutoPaging(role = "creator", limit = 1).map { it.id }.toList()
        for (c in created) assertTrue(walked.contains(c.id), "${c.id} walked")
        assertEquals(walked.size, walked.toSet().size, "no item twice")
    }

    @Test @Order(7)
    fun notFoundAndUnprocessableAreTypedErrors() {
        val nf = assertThrows(NotFoundException::class.java) { partner.getEvent("evt_00000000000000000000000000") }
        assertEquals(404, nf.status)
        assertEquals("not_found", nf.code)
        assertTrue(nf.requestId!!.startsWith("req_"))
        assertEquals(404, nf.problem!!.getInt("status"))
        val bad = assertThrows(UnprocessableEntityException::class.java) { partner.findMatches(FindCriteria(sports = listOf("quidditch"))) }
        assertEquals(422, bad.status)
        assertEquals("unknown_sport", bad.code)
        assertEquals("sports[0]", bad.param)
    }

    @Test @Order(8)
    fun a503AndA429AreRetriedAndAPostKeepsItsIdempotencyKey() {
        val other = partnerMe ?: throw AssertionError("needs the profile step")
        Proxy(base).use { proxy ->
            val viaProxy = Matchpoint(proxy.url, Env.apiKey)
            proxy.fail(1)
            val t0 = System.currentTimeMillis()
            assertEquals(other.id, viaProxy.getMe().id)
            assertTrue(System.currentTimeMillis() - t0 >= 900, "waited for Retry-After")
            assertEquals(2, proxy.seen.size)
            // A 429 likewise.
            proxy.fail(1, 429)
            val t1 = System.currentTimeMillis()
            assertEquals(other.id, viaProxy.getMe().id)
            assertTrue(System.currentTimeMillis() - t1 >= 900, "waited for Retry-After")
            assertEquals(4, proxy.seen.size)
            assertTrue(proxy.seen[0].headers["user-agent"]!!.startsWith("matchpoint-kotlin/"))

            // The server created the event and the answer was lost: the retry replays it.
            val before = partner.listMyEvents(role = "creator", limit = 100).data!!.size
            proxy.fail(1)
            val ev = viaProxy.createEvent(EventDraft(title = "Retried $run", sport = "tennis", location = "Paris", latitude = 48.85, longitude = 2.35, date = Instant.now().plusSeconds(86400).toString(), maxParticipants = 2))
            val posts = proxy.seen.filter { it.method == "POST" }
            assertEquals(2, posts.size)
            assertNotNull(posts[0].headers["idempotency-key"])
            assertEquals(posts[0].headers["idempotency-key"], posts[1].headers["idempotency-key"])
            val after = partner.listMyEvents(role = "creator", limit = 100).data!!
            assertEquals(before + 1, after.size)
            assertTrue(after.any { it.id == ev.id })

            // Out of retries: the 503 is a typed error. HttpURLConnection, Android's transport, does the same.
            val noRetry = Matchpoint(proxy.url, Env.apiKey, ClientOptions(maxRetries = 0, transport = UrlConnectionTransport()))
            proxy.fail(1)
            val e = assertThrows(InternalServerException::class.java) { noRetry.getMe() }
            assertEquals(503, e.status)
            assertEquals(other.id, noRetry.getMe().id)
        }
    }
}
