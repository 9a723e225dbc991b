/** One server-sent event. */
export interface ServerSentEvent {
  id?: string;
  event?: string;
  data: string;
  retry?: number;
}

/**
 * The events of a text/event-stream answer (client.stream(), streamWebhook()),
 * as they arrive; comments (heartbeats) are skipped. Stop by breaking out of
 * the loop. To resume after a break, call again with the Last-Event-ID
 * header: client.stream(undefined, { headers: { "Last-Event-ID": lastId } }).
 */
export async function* readEvents(res: Response): AsyncGenerator<ServerSentEvent> {
  if (!res.body) return;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let ev: ServerSentEvent = { data: "" };
  let any = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      let nl: number;
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + (buf[nl] === "\r" && buf[nl + 1] === "\n" ? 2 : 1));
        if (line === "") {
          if (any) {
            if (ev.data.endsWith("\n")) ev.data = ev.data.slice(0, -1);
            yield ev;
          }
          ev = { data: "" };
          any = false;
          continue;
        }
        if (line.startsWith(":")) continue;
        const i = line.indexOf(":");
        const field = i < 0 ? line : line.slice(0, i);
        let v = i < 0 ? "" : line.slice(i + 1);
        if (v.startsWith(" ")) v = v.slice(1);
        if (field === "id") ev.id = v;
        else if (field === "event") ev.event = v;
        else if (field === "data") {
          ev.data += v + "\n";
          any = true; // as browsers do, an event without data is not dispatched
        }
        else if (field === "retry" && /^\d+$/.test(v)) ev.retry = Number(v);
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
