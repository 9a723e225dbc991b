package io.matchpoint

import org.json.JSONArray
import org.json.JSONObject

/** A model that writes itself as the JSON the API reads. */
interface JsonModel {
    fun toJson(): JSONObject
}

/** JSON conversions the generated models use (org.json, as on Android). */
object Json {
    /** The value of key k converted by f, or null when absent or null. */
    @JvmStatic fun <T> opt(o: JSONObject, k: String, f: (Any) -> T): T? {
        if (!o.has(k) || o.isNull(k)) return null
        return f(o.get(k))
    }

    @JvmStatic fun <T> list(a: JSONArray, f: (Any) -> T): List<T> {
        val out = ArrayList<T>(a.length())
        for (i in 0 until a.length()) out.add(f(a.get(i)))
        return out
    }

    @JvmStatic fun <T> map(o: JSONObject, f: (Any) -> T): Map<String, T> {
        val out = LinkedHashMap<String, T>()
        val keys = o.keys()
        while (keys.hasNext()) {
            val k = keys.next()
            out[k] = f(o.get(k))
        }
        return out
    }

    /** A Kotlin value as org.json wants it. */
    @JvmStatic fun value(v: Any?): Any? = when (v) {
        null -> JSONObject.NULL
        is JsonModel -> v.toJson()
        is List<*> -> JSONArray().also { a -> v.forEach { a.put(value(it)) } }
        is Map<*, *> -> JSONObject().also { o -> v.forEach { (k, x) -> o.put(k.toString(), value(x)) } }
        else -> v
    }
}

/** Lazy auto-pagination: fetches a page only when the items before it are used up. */
object Pagination {
    class Page<T>(val items: List<T>, val nextCursor: String?)

    @JvmStatic fun <T> items(fetch: (String?) -> Page<T>): Sequence<T> = sequence {
        var cursor: String? = null
        while (true) {
            val page = fetch(cursor)
            yieldAll(page.items)
            cursor = page.nextCursor
            if (cursor == null || cursor.length == 0) break
        }
    }
}
