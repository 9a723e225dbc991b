package io.matchpoint

import java.io.BufferedReader
import java.io.Closeable
import java.net.HttpURLConnection

/** One server-sent event. */
class ServerSentEvent(val id: String?, val event: String?, val data: String, val retryMillis: Long?)

/**
 * An open text/event-stream answer: iterate its events (blocking until the
 * next one arrives); close() ends it. Comments (heartbeats) are skipped.
 * To resume after a break, open it again with the Last-Event-ID header
 * (RequestOptions(headers = mapOf("Last-Event-ID" to lastId))).
 */
class EventStream internal constructor(private val conn: HttpURLConnection) : Iterator<ServerSentEvent>, Closeable {
    private val reader: BufferedReader = conn.inputStream.bufferedReader(Charsets.UTF_8)
    private var pending: ServerSentEvent? = null
    private var ended = false

    /** The id of the last event read, for Last-Event-ID. */
    var lastEventId: String? = null
        private set

    override fun hasNext(): Boolean {
        if (pending == null && !ended) pending = read()
        return pending != null
    }

    override fun next(): ServerSentEvent {
        if (!hasNext()) throw NoSuchElementException("the stream ended")
        val e = pending!!
        pending = null
        return e
    }

    private fun read(): ServerSentEvent? {
        var id: String? = null
        var event: String? = null
        var retry: Long? = null
        val data = StringBuilder()
        var any = false
        while (true) {
            val line = try {
                reader.readLine()
            } catch (e: java.io.IOException) {
                if (ended) null else throw APIConnectionException("event stream: ${e.message}", e)
            }
            if (line == null) {
                ended = true
                return null
            }
            if (line.length == 0) {
                if (!any) {
                    id = null
                    event = null
                    continue
                }
                if (id != null) lastEventId = id
                val d = if (data.length > 0 && data[data.length - 1] == '\n') data.substring(0, data.length - 1) else data.toString()
                return ServerSentEvent(id, event, d, retry)
            }
            if (line.startsWith(":")) continue
            val i = line.indexOf(':')
            val field = if (i < 0) line else line.substring(0, i)
            var value = if (i < 0) "" else line.substring(i + 1)
            if (value.startsWith(" ")) value = value.substring(1)
            when (field) {
                "id" -> id = value
                "event" -> event = value
                // As browsers do, an event without data is not dispatched.
                "data" -> {
                    data.append(value).append('\n')
                    any = true
                }
                "retry" -> retry = value.toLongOrNull()
            }
        }
    }

    override fun close() {
        ended = true
        conn.disconnect()
    }
}
