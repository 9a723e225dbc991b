package io.matchpoint

import java.io.ByteArrayOutputStream
import java.io.IOException
import java.net.HttpURLConnection
import java.net.URL

/** One HTTP exchange, as the client's core sees it. */
class HttpRequest(val method: String, val url: String, val headers: Map<String, String>, val body: ByteArray?, val timeoutMillis: Long)

/** headers have lower-case names. */
class HttpResponse(val status: Int, val headers: Map<String, List<String>>, val body: ByteArray) {
    fun header(name: String): String? = headers[name.toLowerCase()]?.firstOrNull()
}

/** Sends requests; IOException means no answer (the client retries those). */
interface Transport {
    @Throws(IOException::class)
    fun execute(request: HttpRequest): HttpResponse
}

/** The transport of a platform: java.net.http on a JVM that has it, HttpURLConnection elsewhere (Android). */
object Transports {
    @JvmStatic fun default(): Transport = try {
        Class.forName("java.net.http.HttpClient")
        JdkHttpTransport()
    } catch (e: ClassNotFoundException) {
        UrlConnectionTransport()
    }
}

/**
 * HttpURLConnection, Android's HTTP API. Android's implementation sends
 * PATCH; the JVM's refuses it, so there JdkHttpTransport is the default.
 */
class UrlConnectionTransport : Transport {
    override fun execute(request: HttpRequest): HttpResponse {
        val c = URL(request.url).openConnection() as HttpURLConnection
        try {
            try {
                c.requestMethod = request.method
            } catch (e: java.net.ProtocolException) {
                // Not an IOException to retry: the JVM's HttpURLConnection never sends PATCH.
                throw UnsupportedOperationException("this platform's HttpURLConnection cannot send ${request.method}; use JdkHttpTransport", e)
            }
            c.instanceFollowRedirects = false
            c.connectTimeout = request.timeoutMillis.toInt()
            c.readTimeout = request.timeoutMillis.toInt()
            for ((k, v) in request.headers) c.setRequestProperty(k, v)
            if (request.body != null) {
                c.doOutput = true
                c.setFixedLengthStreamingMode(request.body.size)
                c.outputStream.use { it.write(request.body) }
            }
            val status = c.responseCode
            val stream = (if (status >= 400) c.errorStream else c.inputStream)
            val out = ByteArrayOutputStream()
            stream?.use { it.copyTo(out) }
            val headers = LinkedHashMap<String, List<String>>()
            for ((k, v) in c.headerFields) if (k != null) headers[k.toLowerCase()] = v
            return HttpResponse(status, headers, out.toByteArray())
        } finally {
            c.disconnect()
        }
    }
}

/** java.net.http (Java 11+): every method, HTTP/1.1 and HTTP/2. */
class JdkHttpTransport @JvmOverloads constructor(
    private val client: java.net.http.HttpClient = java.net.http.HttpClient.newBuilder()
        .followRedirects(java.net.http.HttpClient.Redirect.NEVER).build()
) : Transport {
    override fun execute(request: HttpRequest): HttpResponse {
        val b = java.net.http.HttpRequest.newBuilder(java.net.URI.create(request.url))
            .timeout(java.time.Duration.ofMillis(request.timeoutMillis))
            .method(request.method, if (request.body == null) java.net.http.HttpRequest.BodyPublishers.noBody() else java.net.http.HttpRequest.BodyPublishers.ofByteArray(request.body))
        for ((k, v) in request.headers) {
            // java.net.http sets these itself and refuses them.
            if (k.equals("Host", true) || k.equals("Content-Length", true) || k.equals("Connection", true)) continue
            b.header(k, v)
        }
        val res = try {
            client.send(b.build(), java.net.http.HttpResponse.BodyHandlers.ofByteArray())
        } catch (e: InterruptedException) {
            Thread.currentThread().interrupt()
            throw IOException(e)
        }
        val headers = LinkedHashMap<String, List<String>>()
        for ((k, v) in res.headers().map()) headers[k.toLowerCase()] = v
        return HttpResponse(res.statusCode(), headers, res.body())
    }
}
