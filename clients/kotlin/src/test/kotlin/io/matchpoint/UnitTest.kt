package io.matchpoint

import com.sun.net.httpserver.HttpServer
import org.json.JSONObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.net.InetSocketAddress
import java.security.MessageDigest
import java.security.SecureRandom
import java.util.Base64
import java.util.concurrent.CopyOnWriteArrayList
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

/** The client's own logic: webhook signatures, PKCE, retries and their limits. */
class UnitTest {
    private val key = ByteArray(24).also { SecureRandom().nextBytes(it) }
    private val secret = "whsec_" + Base64.getEncoder().encodeToString(key)
    private val body = """{"id":"whe_1","type":"match.created","created":"2026-01-01T09:00:00.000Z","data":{"match":{"id":"mch_1"}}}"""

    private fun sign(id: String, ts: Long, b: String, k: ByteArray = key): String {
        val mac = Mac.getInstance("HmacSHA256")
        mac.init(SecretKeySpec(k, "HmacSHA256"))
        return "v1," + Base64.getEncoder().encodeToString(mac.doFinal("$id.$ts.$b".toByteArray()))
    }

    private fun headers(ts: Long, sig: String = sign("whe_1", ts, body)) = mapOf("Webhook-Id" to "whe_1", "Webhook-Timestamp" to ts.toString(), "Webhook-Signature" to sig)

    @Test
    fun verifyAcceptsAGoodSignatureAndTypesTheEvent() {
        val now = System.currentTimeMillis() / 1000
        val ev = Webhooks.verify(body, headers(now), secret)
        assertTrue(ev is MatchCreatedEvent)
        assertEquals("mch_1", (ev as MatchCreatedEvent).data!!.match!!.id)
        // Two signatures during a rotation; a secret without its prefix.
        val other = ByteArray(24).also { SecureRandom().nextBytes(it) }
        val two = headers(now, sign("whe_1", now, body, other) + " " + sign("whe_1", now, body))
        assertEquals("whe_1", Webhooks.verify(body.toByteArray(), two, Base64.getEncoder().encodeToString(key)).id)
    }

    @Test
    fun verifyRefusesBadSignaturesAndTimestamps() {
        val now = System.currentTimeMillis() / 1000
        fun refused(msg: String, f: () -> Unit) {
            val e = assertThrows(WebhookVerificationException::class.java) { f() }
            assertTrue(e.message!!.contains(msg), e.message)
        }
        refused("too old") { Webhooks.verify(body, headers(now - 301), secret) }
        refused("future") { Webhooks.verify(body, headers(now + 301), secret) }
        refused("no matching") { Webhooks.verify(body.replace("mch_1", "mch_2"), headers(now), secret) }
        refused("no matching") { Webhooks.verify(body, headers(now, "v2," + sign("whe_1", now, body).substring(3)), secret) }
        refused("missing") { Webhooks.verify(body, mapOf("webhook-id" to "whe_1"), secret) }
        refused("timestamp") { Webhooks.verify(body, headers(now).plus("Webhook-Timestamp" to "12x"), secret) }
        refused("secret") { Webhooks.verify(body, headers(now), "whsec_") }
        // The window moves with the injected clock.
        assertEquals("whe_1", Webhooks.verify(body, headers(now - 3600), secret, nowMillis = (now - 3600) * 1000).id)
    }

    @Test
    fun pkceIsS256() {
        val p = Pkce.create()
        assertTrue(Regex("^[A-Za-z0-9_-]{43}$").matches(p.codeVerifier))
        val want = Base64.getUrlEncoder().withoutPadding().encodeToString(MessageDigest.getInstance("SHA-256").digest(p.codeVerifier.toByteArray()))
        assertEquals(want, p.codeChallenge)
    }

    /** A server answering with (status, Retry-After, body) in turn; records request headers. */
    private fun scripted(vararg answers: Triple<Int, String?, String>, f: (String, List<Map<String, String>>) -> Unit) {
        val seen = CopyOnWriteArrayList<Map<String, String>>()
        val srv = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
        srv.createContext("/") { ex ->
            seen.add(ex.requestHeaders.mapKeys { it.key.toLowerCase() }.mapValues { it.value.first() })
            val (status, ra, b) = answers[Math.min(seen.size - 1, answers.size - 1)]
            if (ra != null) ex.responseHeaders.set("Retry-After", ra)
            ex.responseHeaders.set("Content-Type", "application/json")
            val bytes = b.toByteArray()
            ex.sendResponseHeaders(status, bytes.size.toLong())
            ex.responseBody.use { it.write(bytes) }
        }
        srv.start()
        try {
            f("http://127.0.0.1:${srv.address.port}", seen)
        } finally {
            srv.stop(0)
        }
    }

    @Test
    fun rateLimitIsRetriedAfterRetryAfterThenTyped() {
        val waits = ArrayList<Long>()
        val opts = ClientOptions(sleeper = { waits.add(it) })
        scripted(Triple(429, "2", """{"status":429,"code":"rate_limited"}"""), Triple(200, null, """{"object":"user","id":"usr_1"}""")) { url, seen ->
            assertEquals("usr_1", Matchpoint(url, "mpk_test", opts).getMe().id)
            assertEquals(2, seen.size)
            assertEquals("Bearer mpk_test", seen[0]["authorization"])
            assertEquals(listOf(2000L), waits)
        }
        scripted(Triple(429, "0", """{"status":429,"code":"rate_limited","request_id":"req_x"}""")) { url, seen ->
            val e = assertThrows(RateLimitException::class.java) { Matchpoint(url, "k", ClientOptions(maxRetries = 1)).getMe() }
            assertEquals("rate_limited", e.code)
            assertEquals("req_x", e.requestId)
            assertEquals(2, seen.size)
        }
    }

    @Test
    fun idempotencyInProgressIsRetriedWithTheSameKeyOtherConflictsAreNot() {
        scripted(Triple(409, "0", """{"status":409,"code":"idempotency_in_progress"}"""), Triple(201, null, """{"object":"match","id":"mch_1"}""")) { url, seen ->
            assertEquals("mch_1", Matchpoint(url, "k").createMatch(CreateMatchRequest(userId = "usr_2")).id)
            assertEquals(2, seen.size)
            assertEquals(seen[0]["idempotency-key"], seen[1]["idempotency-key"])
        }
        scripted(Triple(409, null, """{"status":409,"code":"match_exists"}""")) { url, seen ->
            val e = assertThrows(ConflictException::class.java) { Matchpoint(url, "k").createMatch(CreateMatchRequest(userId = "usr_2"), RequestOptions(idempotencyKey = "mine")) }
            assertEquals("match_exists", e.code)
            assertEquals(1, seen.size)
            assertEquals("mine", seen[0]["idempotency-key"])
        }
    }

    @Test
    fun aRefusedConnectionIsRetriedThenAConnectionError() {
        var port = 0
        scripted(Triple(200, null, "{}")) { url, _ -> port = url.substringAfterLast(':').toInt() }
        var waits = 0
        val e = assertThrows(APIConnectionException::class.java) { Matchpoint("http://127.0.0.1:$port", "k", ClientOptions(maxRetries = 2, sleeper = { waits++ })).getMe() }
        assertEquals(0, e.status)
        assertEquals(2, waits)
    }

    @Test
    fun modelsRoundTripTheirJson() {
        val p = ProfilePatch(firstName = "Ada", sports = listOf("tennis"), skillLevels = mapOf("tennis" to "expert"), latitude = 1.5)
        val j = p.toJson()
        assertEquals("""{"first_name":"Ada","latitude":1.5,"skill_levels":{"tennis":"expert"},"sports":["tennis"]}""", sortJson(j))
        assertEquals(p, ProfilePatch.fromJson(JSONObject(j.toString())))
    }

    private fun sortJson(o: JSONObject): String = o.keys().asSequence().sorted().joinToString(",", "{", "}") { k ->
        val v = o.get(k)
        JSONObject.quote(k) + ":" + when (v) {
            is JSONObject -> sortJson(v)
            is String -> JSONObject.quote(v)
            else -> v.toString()
        }
    }

    @Test
    fun eventStreamsParseServerSentEventsAndSkipComments() {
        val srv = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
        srv.createContext("/v1/stream") { ex ->
            ex.responseHeaders.set("Content-Type", "text/event-stream")
            ex.sendResponseHeaders(200, 0)
            ex.responseBody.use { it.write(": matchpoint stream\nretry: 2000\n\nid: 7\nevent: message.sent\ndata: {\"a\":1}\ndata: x\r\n\r\n: heartbeat\n\nid: 8\ndata: last\n\n".toByteArray()) }
        }
        srv.start()
        try {
            val got = Matchpoint("http://127.0.0.1:${srv.address.port}", "k").stream().use { s -> s.asSequence().map { listOf(it.id, it.event, it.data) }.toList() }
            assertEquals(listOf(listOf("7", "message.sent", "{\"a\":1}\nx"), listOf("8", null, "last")), got)
        } finally {
            srv.stop(0)
        }
    }
}
