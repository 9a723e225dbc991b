package io.matchpoint

import java.net.URI
import java.net.URLDecoder
import java.net.URLEncoder
import java.security.MessageDigest
import java.security.SecureRandom
import java.util.Base64

/** A PKCE pair: keep the verifier, send the S256 challenge. */
class Pkce(val codeVerifier: String, val codeChallenge: String) {
    companion object {
        private val random = SecureRandom()

        @JvmStatic fun randomToken(bytes: Int): String {
            val b = ByteArray(bytes)
            random.nextBytes(b)
            return Base64.getUrlEncoder().withoutPadding().encodeToString(b)
        }

        /** A fresh pair; the verifier has 43 characters, the least RFC 7636 allows. */
        @JvmStatic fun create(): Pkce {
            val verifier = randomToken(32)
            val digest = MessageDigest.getInstance("SHA-256").digest(verifier.toByteArray(Charsets.US_ASCII))
            return Pkce(verifier, Base64.getUrlEncoder().withoutPadding().encodeToString(digest))
        }
    }
}

/** Where to send the person, and what to keep until the callback. */
class AuthorizeUrl(val url: String, val state: String, val codeVerifier: String)

/** OAuth 2.0 authorization code flow with PKCE, as client.oauth. */
class OAuth internal constructor(private val client: Matchpoint) {
    private fun o(): OAuthClient = client.options.oauth ?: throw MatchpointException("the client has no OAuth client (ClientOptions.oauth)")

    /** The authorize address with a fresh PKCE pair and state. */
    @JvmOverloads fun authorizeUrl(scope: String? = null, state: String? = null, redirectUri: String? = null): AuthorizeUrl {
        val ru = redirectUri ?: o().redirectUri ?: throw MatchpointException("redirectUri is required")
        val pkce = Pkce.create()
        val st = state ?: Pkce.randomToken(16)
        val params = linkedMapOf("response_type" to "code", "client_id" to o().clientId, "redirect_uri" to ru)
        if (scope != null) params["scope"] = scope
        params["state"] = st
        params["code_challenge"] = pkce.codeChallenge
        params["code_challenge_method"] = "S256"
        val q = params.entries.joinToString("&") { URLEncoder.encode(it.key, "UTF-8") + "=" + URLEncoder.encode(it.value, "UTF-8") }
        return AuthorizeUrl(client.baseUrl + "/oauth/authorize?" + q, st, pkce.codeVerifier)
    }

    /** Reads the callback address: checks state, returns the code or throws the error the service sent. */
    fun parseCallback(callbackUrl: String, expectedState: String): String {
        val params = HashMap<String, String>()
        val raw = URI(callbackUrl).rawQuery ?: ""
        for (pair in raw.split("&")) {
            if (pair.length == 0) continue
            val i = pair.indexOf('=')
            val k = URLDecoder.decode(if (i < 0) pair else pair.substring(0, i), "UTF-8")
            params[k] = if (i < 0) "" else URLDecoder.decode(pair.substring(i + 1), "UTF-8")
        }
        params["error"]?.let { throw MatchpointException("authorization failed: $it ${params["error_description"] ?: ""}".trim()) }
        if (params["state"] != expectedState) throw MatchpointException("authorization callback state does not match")
        return params["code"] ?: throw MatchpointException("authorization callback without code")
    }

    /** Exchanges the code for a token set, which the client then uses. */
    @JvmOverloads fun exchangeCode(code: String, codeVerifier: String, redirectUri: String? = null): TokenSet {
        val ru = redirectUri ?: o().redirectUri ?: throw MatchpointException("redirectUri is required")
        return client.tokenRequest(linkedMapOf("grant_type" to "authorization_code", "code" to code, "code_verifier" to codeVerifier, "redirect_uri" to ru))
    }

    /**
     * Refreshes the token set now. Threads asking together share one
     * refresh: each asks to replace the access token it saw, and those that
     * find it already replaced get the new set.
     */
    fun refresh(): TokenSet = client.refresh(client.tokenSet?.let { "Bearer " + it.accessToken })

    /**
     * Refreshes the token set unless it has already moved past [seenAccessToken]:
     * threads that each saw the same access token fail share one refresh,
     * however late one of them arrives, and the late ones get the new set.
     */
    fun refresh(seenAccessToken: String): TokenSet = client.refresh("Bearer $seenAccessToken")
}
