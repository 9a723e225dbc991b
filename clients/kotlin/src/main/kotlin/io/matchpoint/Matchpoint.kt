package io.matchpoint

import org.json.JSONObject
import org.json.JSONTokener
import java.io.IOException
import java.net.URLEncoder
import java.util.UUID

/** The version of this library, sent in the User-Agent. */
const val VERSION = "0.1.0"

/** A token set of the OAuth token endpoint, with when the access token expires. */
data class TokenSet(
    val accessToken: String,
    val refreshToken: String? = null,
    val tokenType: String? = null,
    val scope: String? = null,
    /** Milliseconds since the epoch when accessToken expires; null when unknown. */
    val expiresAt: Long? = null
)

/** How the client signs in as an OAuth client. */
class OAuthClient @JvmOverloads constructor(
    val clientId: String,
    /** Confidential clients only; apps on a device use PKCE alone. */
    val clientSecret: String? = null,
    val redirectUri: String? = null,
    /** Called with every new token set (code exchange, refresh), to persist it. */
    val onTokens: ((TokenSet) -> Unit)? = null
)

/** Settings of a client. */
class ClientOptions @JvmOverloads constructor(
    /** An OAuth access token (instead of an API key). */
    val accessToken: String? = null,
    /** The OAuth client this app is, for the code flow and refreshes. */
    val oauth: OAuthClient? = null,
    /** A token set kept from an earlier run. */
    val tokens: TokenSet? = null,
    val timeoutMillis: Long = 60_000,
    /** Retries after the first attempt. */
    val maxRetries: Int = 2,
    val transport: Transport = Transports.default(),
    val defaultHeaders: Map<String, String> = emptyMap(),
    /** The clock (milliseconds), for tests. */
    val clock: () -> Long = { System.currentTimeMillis() },
    /** How the client waits between retries, for tests. */
    val sleeper: (Long) -> Unit = { Thread.sleep(it) }
)

/** Per-request settings. */
class RequestOptions @JvmOverloads constructor(
    val idempotencyKey: String? = null,
    val timeoutMillis: Long? = null,
    val maxRetries: Int? = null,
    val headers: Map<String, String> = emptyMap()
)

/**
 * The Matchpoint API client: one method per operation of the API (named
 * after its operationId), auto-pagination (...AutoPaging), retries with
 * backoff honouring Retry-After, typed errors, and the OAuth code flow.
 *
 *     val mp = Matchpoint("https://api.matchpoint.example", "mpk_...")
 *     val me = mp.getMe()
 */
class Matchpoint @JvmOverloads constructor(baseUrl: String, val apiKey: String? = null, val options: ClientOptions = ClientOptions()) : Operations() {
    val baseUrl: String = baseUrl.trimEnd('/')
    private val lock = Any()
    @Volatile private var tokens: TokenSet? = options.tokens ?: options.accessToken?.let { TokenSet(it) }

    /** The OAuth code flow with PKCE and refreshes (needs options.oauth). */
    val oauth: OAuth = OAuth(this)

    /** The current OAuth token set, if any. */
    val tokenSet: TokenSet? get() = tokens

    /** Replaces the token set (to force a refresh in tests, or after loading it). */
    fun setTokens(t: TokenSet?) {
        tokens = t
    }

    override fun send(method: String, path: String, query: List<Pair<String, Any?>>, body: Any?, form: Boolean, auth: Boolean, options: RequestOptions?): String {
        val sb = StringBuilder(baseUrl).append(path)
        var sep = '?'
        for ((k, v) in query) {
            if (v == null) continue
            val values = if (v is List<*>) v else listOf(v)
            for (x in values) {
                sb.append(sep).append(enc(k)).append('=').append(enc(x.toString()))
                sep = '&'
            }
        }
        val headers = LinkedHashMap<String, String>()
        headers["Accept"] = "application/json"
        headers["User-Agent"] = "matchpoint-kotlin/$VERSION"
        headers.putAll(this.options.defaultHeaders)
        options?.headers?.let { headers.putAll(it) }
        var payload: ByteArray? = null
        if (body != null) {
            if (form) {
                @Suppress("UNCHECKED_CAST")
                val m = body as Map<String, String>
                headers["Content-Type"] = "application/x-www-form-urlencoded"
                payload = m.entries.joinToString("&") { enc(it.key) + "=" + enc(it.value) }.toByteArray(Charsets.UTF_8)
            } else {
                headers["Content-Type"] = "application/json"
                val json = if (body is JsonModel) body.toJson() else Json.value(body)
                payload = json.toString().toByteArray(Charsets.UTF_8)
            }
        }
        // One key for every attempt, so that a retried POST takes effect once.
        if (method == "POST") headers["Idempotency-Key"] = options?.idempotencyKey ?: "mpkt_" + UUID.randomUUID()
        val res = execute(method, sb.toString(), headers, payload, auth, options)
        return String(res.body, Charsets.UTF_8)
    }

    /**
     * Opens a text/event-stream operation over HttpURLConnection (it reads
     * as events arrive), with the retries and the refresh on 401 of other
     * calls. Reads time out after timeoutMillis without a byte; the service
     * sends heartbeats more often than that.
     */
    override fun openEventStream(path: String, query: List<Pair<String, Any?>>, auth: Boolean, options: RequestOptions?): EventStream {
        val sb = StringBuilder(baseUrl).append(path)
        var sep = '?'
        for ((k, v) in query) {
            if (v == null) continue
            sb.append(sep).append(enc(k)).append('=').append(enc(v.toString()))
            sep = '&'
        }
        val maxRetries = options?.maxRetries ?: this.options.maxRetries
        val timeout = (options?.timeoutMillis ?: this.options.timeoutMillis).toInt()
        var refreshedOn401 = false
        var attempt = 0
        while (true) {
            val c = java.net.URL(sb.toString()).openConnection() as java.net.HttpURLConnection
            c.connectTimeout = timeout
            c.readTimeout = timeout
            c.setRequestProperty("Accept", "text/event-stream")
            c.setRequestProperty("User-Agent", "matchpoint-kotlin/$VERSION")
            for ((k, v) in this.options.defaultHeaders) c.setRequestProperty(k, v)
            options?.headers?.forEach { (k, v) -> c.setRequestProperty(k, v) }
            val authorization = if (auth) authorization() else null
            if (authorization != null) c.setRequestProperty("Authorization", authorization)
            val status = try {
                c.responseCode
            } catch (e: IOException) {
                c.disconnect()
                if (attempt < maxRetries) {
                    this.options.sleeper(backoff(attempt, null))
                    attempt++
                    continue
                }
                throw APIConnectionException("GET $sb: ${e.message ?: e.javaClass.simpleName}", e)
            }
            if (status in 200..299) return EventStream(c)
            val headers = LinkedHashMap<String, List<String>>()
            for ((k, v) in c.headerFields) if (k != null) headers[k.toLowerCase()] = v
            val text = try { c.errorStream?.use { String(it.readBytes(), Charsets.UTF_8) } ?: "" } catch (e: IOException) { "" }
            c.disconnect()
            val problem = try { JSONTokener(text).nextValue() as? JSONObject } catch (e: Exception) { null } ?: JSONObject().put("detail", text.take(500))
            if (status == 401 && auth && !refreshedOn401 && canRefresh()) {
                refreshedOn401 = true
                refresh(authorization)
                continue
            }
            val res = HttpResponse(status, headers, ByteArray(0))
            if (attempt < maxRetries && (status == 408 || status == 429 || status >= 500)) {
                this.options.sleeper(backoff(attempt, res))
                attempt++
                continue
            }
            throw MatchpointException.of(status, problem, headers)
        }
    }

    private fun execute(method: String, url: String, headers: MutableMap<String, String>, payload: ByteArray?, auth: Boolean, options: RequestOptions?): HttpResponse {
        val maxRetries = options?.maxRetries ?: this.options.maxRetries
        val timeout = options?.timeoutMillis ?: this.options.timeoutMillis
        var refreshedOn401 = false
        var attempt = 0
        while (true) {
            if (auth) authorization()?.let { headers["Authorization"] = it }
            val res: HttpResponse
            try {
                res = this.options.transport.execute(HttpRequest(method, url, headers, payload, timeout))
            } catch (e: IOException) {
                if (attempt < maxRetries) {
                    this.options.sleeper(backoff(attempt, null))
                    attempt++
                    continue
                }
                throw APIConnectionException("$method $url: ${e.message ?: e.javaClass.simpleName}", e)
            }
            if (res.status in 200..299) return res
            val text = String(res.body, Charsets.UTF_8)
            val problem = try {
                JSONTokener(text).nextValue() as? JSONObject
            } catch (e: Exception) {
                null
            } ?: JSONObject().put("detail", text.take(500))
            // An expired or revoked access token: refresh once and try again.
            if (res.status == 401 && auth && !refreshedOn401 && canRefresh()) {
                refreshedOn401 = true
                refresh(headers["Authorization"])
                continue
            }
            val retryable = res.status == 408 || res.status == 429 || res.status >= 500 ||
                (res.status == 409 && problem.optString("code") == "idempotency_in_progress")
            if (attempt < maxRetries && retryable && res.header("x-should-retry") != "false") {
                this.options.sleeper(backoff(attempt, res))
                attempt++
                continue
            }
            throw MatchpointException.of(res.status, problem, res.headers)
        }
    }

    /** Milliseconds before retry attempt+1: Retry-After when given (up to a minute), else exponential with jitter. */
    internal fun backoff(attempt: Int, res: HttpResponse?): Long {
        val ra = res?.header("retry-after")
        if (ra != null) {
            val secs = ra.trim().toDoubleOrNull()
            val ms = if (secs != null) (secs * 1000).toLong() else try {
                java.time.ZonedDateTime.parse(ra, java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli() - options.clock()
            } catch (e: Exception) {
                -1L
            }
            if (ms in 0..60_000) return ms
        }
        val base = Math.min(500.0 * Math.pow(2.0, attempt.toDouble()), 8000.0)
        return (base * (0.75 + Math.random() * 0.25)).toLong()
    }

    private fun canRefresh(): Boolean = options.oauth != null && tokens?.refreshToken != null

    private fun authorization(): String? {
        val t = tokens
        if (t != null) {
            // Refresh a little before expiry rather than fail a request.
            if (canRefresh() && t.expiresAt != null && t.expiresAt - options.clock() < 30_000) refresh("Bearer " + t.accessToken)
            return "Bearer " + tokens!!.accessToken
        }
        return apiKey?.let { "Bearer $it" }
    }

    /**
     * Refreshes the token set once however many threads ask together: they
     * queue on the lock, and those whose failed Authorization is no longer
     * current find the new tokens and return.
     */
    internal fun refresh(stale: String?): TokenSet {
        synchronized(lock) {
            val t = tokens ?: throw MatchpointException("no token set to refresh")
            if (stale != null && stale != "Bearer " + t.accessToken) return t
            val rt = t.refreshToken ?: throw MatchpointException("no refresh token to refresh with")
            return tokenRequest(linkedMapOf("grant_type" to "refresh_token", "refresh_token" to rt))
        }
    }

    /** Calls the token endpoint as the OAuth client and keeps the token set it answers. */
    internal fun tokenRequest(form: Map<String, String>): TokenSet {
        val o = options.oauth ?: throw MatchpointException("the client has no OAuth client (ClientOptions.oauth)")
        val body = LinkedHashMap(form)
        body["client_id"] = o.clientId
        if (o.clientSecret != null) body["client_secret"] = o.clientSecret
        val text = try {
            send("POST", "/oauth/token", emptyList(), body, true, false, null)
        } catch (e: MatchpointException) {
            val err = e.problem?.optString("error", null)
            if (err != null) throw OAuthException(err, e.problem.optString("error_description", null), e.status, e.headers)
            throw e
        }
        val j = JSONObject(text)
        val expiresIn = if (j.has("expires_in")) j.getLong("expires_in") else null
        val old = tokens
        val ts = TokenSet(
            accessToken = j.getString("access_token"),
            // A refresh answer without a refresh token keeps the old one.
            refreshToken = j.optString("refresh_token", null) ?: (if (form["grant_type"] == "refresh_token") old?.refreshToken else null),
            tokenType = j.optString("token_type", null),
            scope = j.optString("scope", null),
            expiresAt = expiresIn?.let { options.clock() + it * 1000 }
        )
        tokens = ts
        o.onTokens?.invoke(ts)
        return ts
    }

    private fun enc(s: String): String = URLEncoder.encode(s, "UTF-8").replace("+", "%20")
}
