package io.matchpoint

import org.json.JSONObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.net.URL

/**
 * Every operation of the served OpenAPI document has a method, every list
 * that follows next_cursor an auto-paging one, every webhook kind a class.
 * Fails when the service grew and the client was not regenerated
 * (node scripts/generate.mjs $MATCHPOINT_BASE_URL/openapi.json).
 */
class CoverageTest {
    private fun camel(id: String) = Regex("[-_.]([a-zA-Z0-9])").replace(id) { it.groupValues[1].toUpperCase() }

    @Test
    fun everyOperationOfTheServedDocumentHasAMethod() {
        val doc = JSONObject(URL(Env.baseUrl + "/openapi.json").readText())
        val methods = Matchpoint::class.java.methods.map { it.name }.toSet()
        val schemas = doc.getJSONObject("components").getJSONObject("schemas")
        fun ref(o: JSONObject?): JSONObject? = o?.optString("\$ref", null)?.let { schemas.optJSONObject(it.substringAfterLast('/')) }
        val missing = ArrayList<String>()
        val served = ArrayList<String>()
        val paths = doc.getJSONObject("paths")
        for (p in paths.keys()) {
            val item = paths.getJSONObject(p)
            for (m in listOf("get", "post", "put", "patch", "delete")) {
                val op = item.optJSONObject(m) ?: continue
                val id = op.getString("operationId")
                served.add(id)
                if (camel(id) !in methods) missing.add("$id (${m.toUpperCase()} $p)")
                val params = op.optJSONArray("parameters")
                val hasCursor = params != null && (0 until params.length()).any { params.getJSONObject(it).optString("name") == "cursor" }
                val ok = ref(op.optJSONObject("responses")?.optJSONObject("200")?.optJSONObject("content")?.optJSONObject("application/json")?.optJSONObject("schema"))
                val body = ref(op.optJSONObject("requestBody")?.optJSONObject("content")?.optJSONObject("application/json")?.optJSONObject("schema"))
                val paged = ok?.optJSONObject("properties")?.has("next_cursor") == true && (hasCursor || body?.optJSONObject("properties")?.has("cursor") == true)
                if (paged && camel(id) + "AutoPaging" !in methods) missing.add("$id auto-paging")
            }
        }
        assertEquals(emptyList<String>(), missing, "operations without a method")
        assertTrue(served.size > 50, "${served.size} operations served")
        assertEquals(emptyList<String>(), Operations.OPERATION_IDS.filter { it !in served }, "methods of operations the service no longer has")
        val kinds = doc.optJSONObject("webhooks")?.keys()?.asSequence()?.toList() ?: emptyList()
        assertEquals(emptyList<String>(), kinds.filter { it !in WebhookEvent.TYPES }, "webhook kinds without a class")
    }
}
