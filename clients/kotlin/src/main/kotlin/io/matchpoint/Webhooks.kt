package io.matchpoint

import org.json.JSONObject
import java.security.MessageDigest
import java.util.Base64
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

/**
 * Verification of the webhooks the service sends (Standard Webhooks:
 * webhook-id, webhook-timestamp, webhook-signature over "id.timestamp.body"
 * with HMAC-SHA256 and the endpoint's whsec_ secret).
 */
object Webhooks {
    /** How far a timestamp may be from now, either way. */
    const val DEFAULT_TOLERANCE_SECONDS = 300L

    /**
     * Checks the headers of a received webhook against its raw body and
     * returns the typed event. Header names are matched without case.
     * Throws WebhookVerificationException when a header is missing, the
     * timestamp is outside the window, or no signature matches.
     */
    @JvmStatic @JvmOverloads
    @Throws(WebhookVerificationException::class)
    fun verify(payload: ByteArray, headers: Map<String, String>, secret: String, toleranceSeconds: Long = DEFAULT_TOLERANCE_SECONDS, nowMillis: Long = System.currentTimeMillis()): WebhookEvent {
        fun h(name: String): String? = headers.entries.firstOrNull { it.key.equals(name, ignoreCase = true) }?.value
        val id = h("webhook-id")
        val ts = h("webhook-timestamp")
        val sigs = h("webhook-signature")
        if (id.isNullOrEmpty() || ts.isNullOrEmpty() || sigs.isNullOrEmpty()) throw WebhookVerificationException("missing webhook-id, webhook-timestamp or webhook-signature header")
        val at = if (ts.all { it in '0'..'9' }) ts.toLongOrNull() else null
        if (at == null) throw WebhookVerificationException("invalid webhook-timestamp")
        val now = nowMillis / 1000
        if (now - at > toleranceSeconds) throw WebhookVerificationException("timestamp too old")
        if (at - now > toleranceSeconds) throw WebhookVerificationException("timestamp too far in the future")
        val key = try {
            Base64.getDecoder().decode(secret.removePrefix("whsec_"))
        } catch (e: IllegalArgumentException) {
            throw WebhookVerificationException("invalid secret")
        }
        if (key.isEmpty()) throw WebhookVerificationException("invalid secret")
        val mac = Mac.getInstance("HmacSHA256")
        mac.init(SecretKeySpec(key, "HmacSHA256"))
        mac.update("$id.$ts.".toByteArray(Charsets.UTF_8))
        val want = mac.doFinal(payload)
        for (s in sigs.split(" ")) {
            val i = s.indexOf(',')
            if (i < 0 || s.substring(0, i) != "v1") continue
            val got = try {
                Base64.getDecoder().decode(s.substring(i + 1))
            } catch (e: IllegalArgumentException) {
                continue
            }
            // MessageDigest.isEqual compares in constant time.
            if (MessageDigest.isEqual(got, want)) {
                val o = try {
                    JSONObject(String(payload, Charsets.UTF_8))
                } catch (e: Exception) {
                    throw WebhookVerificationException("payload is not JSON")
                }
                return WebhookEvent.parse(o)
            }
        }
        throw WebhookVerificationException("no matching signature")
    }

    @JvmStatic @JvmOverloads
    @Throws(WebhookVerificationException::class)
    fun verify(payload: String, headers: Map<String, String>, secret: String, toleranceSeconds: Long = DEFAULT_TOLERANCE_SECONDS, nowMillis: Long = System.currentTimeMillis()): WebhookEvent =
        verify(payload.toByteArray(Charsets.UTF_8), headers, secret, toleranceSeconds, nowMillis)
}
