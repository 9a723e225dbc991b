package io.matchpoint

import com.sun.net.httpserver.HttpServer
import com.sun.net.httpserver.HttpsConfigurator
import com.sun.net.httpserver.HttpsServer
import org.json.JSONObject
import java.io.File
import java.net.InetSocketAddress
import java.net.URI
import java.net.URLEncoder
import java.net.http.HttpClient
import java.net.http.HttpRequest as JRequest
import java.net.http.HttpResponse as JResponse
import java.security.KeyFactory
import java.security.KeyStore
import java.security.cert.CertificateFactory
import java.security.spec.PKCS8EncodedKeySpec
import java.util.Base64
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicInteger
import javax.net.ssl.KeyManagerFactory
import javax.net.ssl.SSLContext

/** The live server and its credentials, from the environment test.sh sets. */
object Env {
    private fun need(k: String): String = System.getenv(k)?.takeIf { it.isNotEmpty() } ?: throw IllegalStateException("integration tests need $k (run test.sh)")
    val baseUrl: String get() = need("MATCHPOINT_BASE_URL").trimEnd('/')
    val apiKey: String get() = need("MATCHPOINT_API_KEY")
    val clientId: String get() = need("MATCHPOINT_CLIENT_ID")
    val clientSecret: String get() = need("MATCHPOINT_CLIENT_SECRET")
    val redirectUri: String get() = need("MATCHPOINT_REDIRECT_URI")
    val login: String get() = need("MATCHPOINT_USER_LOGIN")
    val password: String get() = need("MATCHPOINT_USER_PASSWORD")
    val tlsCert: String get() = need("MATCHPOINT_TEST_TLS_CERT")
    val tlsKey: String get() = need("MATCHPOINT_TEST_TLS_KEY")
}

class Form(val action: String, val fields: Map<String, String>)

/** The forms of an HTML page, with entities decoded. */
fun forms(html: String): List<Form> {
    fun unescape(s: String): String = Regex("&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);").replace(s) { m ->
        val e = m.groupValues[1]
        when {
            e.startsWith("#x") -> String(Character.toChars(e.substring(2).toInt(16)))
            e.startsWith("#") -> String(Character.toChars(e.substring(1).toInt()))
            else -> mapOf("amp" to "&", "lt" to "<", "gt" to ">", "quot" to "\"", "apos" to "'")[e]!!
        }
    }
    fun attr(tag: String, name: String): String? = Regex("\\s$name=\"([^\"]*)\"").find(tag)?.groupValues?.get(1)?.let { unescape(it) }
    return Regex("<form\\b([^>]*)>([\\s\\S]*?)</form>").findAll(html).map { f ->
        val fields = LinkedHashMap<String, String>()
        for (t in Regex("<input\\b[^>]*>").findAll(f.groupValues[2])) {
            val n = attr(t.value, "name") ?: continue
            fields[n] = attr(t.value, "value") ?: ""
        }
        Form(attr(f.groupValues[1], "action") ?: "", fields)
    }.toList()
}

/**
 * A browser: keeps cookies, follows redirects on the service, stops at a
 * redirect elsewhere (the app's redirect_uri), posts forms with Origin.
 */
class Browser(private val base: String) {
    private val http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build()
    private val jar = LinkedHashMap<String, String>()

    class Page(val status: Int, val body: String, val location: String?)

    fun go(start: String, formBody: String? = null): Page {
        var url = start
        var body = formBody
        repeat(10) {
            val b = JRequest.newBuilder(URI.create(url))
            if (jar.isNotEmpty()) b.header("Cookie", jar.entries.joinToString("; ") { it.key + "=" + it.value })
            if (body != null) b.header("Content-Type", "application/x-www-form-urlencoded").header("Origin", base).POST(JRequest.BodyPublishers.ofString(body))
            val res = http.send(b.build(), JResponse.BodyHandlers.ofString())
            for (c in res.headers().allValues("set-cookie")) {
                val kv = c.substringBefore(';')
                jar[kv.substringBefore('=').trim()] = kv.substringAfter('=').trim()
            }
            if (res.statusCode() < 300 || res.statusCode() >= 400) return Page(res.statusCode(), res.body(), null)
            val loc = URI.create(url).resolve(res.headers().firstValue("location").get()).toString()
            if (!loc.startsWith("$base/")) return Page(res.statusCode(), res.body(), loc)
            url = loc
            body = null
        }
        throw IllegalStateException("too many redirects")
    }

    fun submit(f: Form, set: Map<String, String>): Page {
        val all = LinkedHashMap(f.fields).apply { putAll(set) }
        return go(base + f.action, all.entries.joinToString("&") { URLEncoder.encode(it.key, "UTF-8") + "=" + URLEncoder.encode(it.value, "UTF-8") })
    }

    /** Loads authUrl, signs in and allows; returns the redirect_uri address the service sent the browser to. */
    fun authorize(authUrl: String, login: String, password: String): String {
        var page = go(authUrl)
        var i = 0
        while (page.location == null && i++ < 4) {
            check(page.status == 200) { "authorize: status ${page.status}: ${page.body.take(500)}" }
            val fs = forms(page.body)
            val loginForm = fs.firstOrNull { it.action == "/login" }
            val consent = fs.firstOrNull { it.action == "/oauth/authorize" }
            page = when {
                loginForm != null -> submit(loginForm, mapOf("login" to login, "password" to password))
                consent != null -> submit(consent, mapOf("decision" to "allow"))
                else -> throw IllegalStateException("authorize: no login or consent form: ${page.body.take(1000)}")
            }
        }
        return page.location ?: throw IllegalStateException("authorize: the browser never left the service")
    }
}

/** One webhook request the receiver got. */
class Delivery(val headers: Map<String, String>, val body: ByteArray) {
    val json: JSONObject get() = JSONObject(String(body, Charsets.UTF_8))
}

/** An HTTPS webhook endpoint on 127.0.0.1 with the test's certificate: answers challenges, keeps deliveries. */
class Receiver(certFile: String, keyFile: String) : java.io.Closeable {
    val deliveries = CopyOnWriteArrayList<Delivery>()
    private val server: HttpsServer = HttpsServer.create(InetSocketAddress("127.0.0.1", 0), 0)
    val url: String

    init {
        val cf = CertificateFactory.getInstance("X.509")
        val chain = File(certFile).inputStream().use { cf.generateCertificates(it).toTypedArray() }
        val pem = File(keyFile).readText().replace(Regex("-----[A-Z ]+-----|\\s"), "")
        val spec = PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem))
        val key = try {
            KeyFactory.getInstance("EC").generatePrivate(spec)
        } catch (e: Exception) {
            KeyFactory.getInstance("RSA").generatePrivate(spec)
        }
        val ks = KeyStore.getInstance("PKCS12")
        ks.load(null, null)
        ks.setKeyEntry("receiver", key, CharArray(0), chain)
        val kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm())
        kmf.init(ks, CharArray(0))
        val ssl = SSLContext.getInstance("TLS")
        ssl.init(kmf.keyManagers, null, null)
        server.httpsConfigurator = HttpsConfigurator(ssl)
        server.createContext("/hook") { ex ->
            val body = ex.requestBody.readBytes()
            val probe = try { JSONObject(String(body, Charsets.UTF_8)) } catch (e: Exception) { JSONObject() }
            if (probe.optString("type") == "webhook.verification") {
                val answer = JSONObject().put("challenge", probe.optString("challenge")).toString().toByteArray()
                ex.responseHeaders.set("Content-Type", "application/json")
                ex.sendResponseHeaders(200, answer.size.toLong())
                ex.responseBody.use { it.write(answer) }
            } else {
                val h = HashMap<String, String>()
                for ((k, v) in ex.requestHeaders) h[k.toLowerCase()] = v.first()
                deliveries.add(Delivery(h, body))
                ex.sendResponseHeaders(200, -1)
                ex.close()
            }
        }
        server.executor = java.util.concurrent.Executors.newCachedThreadPool()
        server.start()
        url = "https://127.0.0.1:${server.address.port}/hook"
    }

    /** Waits until pred holds for a delivery (20 s at most). */
    fun waitFor(pred: (Delivery) -> Boolean): Delivery {
        val deadline = System.currentTimeMillis() + 20_000
        while (true) {
            deliveries.firstOrNull(pred)?.let { return it }
            check(System.currentTimeMillis() < deadline) { "no matching delivery in 20 s (${deliveries.size} received)" }
            Thread.sleep(100)
        }
    }

    override fun close() = server.stop(0)
}

/**
 * A proxy to the real server. fail(n) makes the next n requests answer 503
 * with Retry-After: 1 after the real server handled them (so a retried POST
 * without its Idempotency-Key would take effect twice).
 */
class Proxy(private val target: String) : java.io.Closeable {
    class Seen(val method: String, val headers: Map<String, String>)

    val seen = CopyOnWriteArrayList<Seen>()
    private val failures = AtomicInteger(0)
    @Volatile private var failStatus = 503
    private val http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build()
    private val server: HttpServer = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
    val url: String

    init {
        server.createContext("/") { ex ->
            val h = HashMap<String, String>()
            for ((k, v) in ex.requestHeaders) h[k.toLowerCase()] = v.first()
            seen.add(Seen(ex.requestMethod, h))
            val body = ex.requestBody.readBytes()
            val b = JRequest.newBuilder(URI.create(target + ex.requestURI.toString()))
                .method(ex.requestMethod, if (body.isEmpty()) JRequest.BodyPublishers.noBody() else JRequest.BodyPublishers.ofByteArray(body))
            for ((k, v) in h) if (k !in setOf("host", "content-length", "connection", "upgrade", "expect")) b.header(k, v)
            val res = http.send(b.build(), JResponse.BodyHandlers.ofByteArray())
            if (failures.getAndUpdate { if (it > 0) it - 1 else 0 } > 0) {
                val p = """{"type":"about:blank","title":"Unavailable","status":$failStatus,"code":"${if (failStatus == 429) "rate_limited" else "unavailable"}"}""".toByteArray()
                ex.responseHeaders.set("Content-Type", "application/problem+json")
                ex.responseHeaders.set("Retry-After", "1")
                ex.sendResponseHeaders(failStatus, p.size.toLong())
                ex.responseBody.use { it.write(p) }
                return@createContext
            }
            for ((k, v) in res.headers().map()) if (!k.equals("content-length", true) && !k.equals("transfer-encoding", true) && !k.startsWith(":")) ex.responseHeaders[k] = v
            val out = res.body()
            ex.sendResponseHeaders(res.statusCode(), if (out.isEmpty()) -1 else out.size.toLong())
            ex.responseBody.use { it.write(out) }
        }
        server.start()
        url = "http://127.0.0.1:${server.address.port}"
    }

    fun fail(n: Int, status: Int = 503) {
        failStatus = status
        failures.set(n)
    }
    override fun close() = server.stop(0)
}
