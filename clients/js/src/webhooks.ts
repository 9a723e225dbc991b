import { WebhookVerificationError } from "./errors.js";
import type { WebhookEvent } from "./operations.js";

/** How far a webhook's timestamp may be from now, either way (5 minutes). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  toleranceSeconds?: number;
  /** The clock, for tests. */
  now?: () => Date;
}

const header = (h: WebhookHeaders, name: string): string | undefined => {
  if (typeof (h as Headers).get === "function") return (h as Headers).get(name) ?? undefined;
  for (const [k, v] of Object.entries(h)) if (k.toLowerCase() === name) return Array.isArray(v) ? v[0] : v;
  return undefined;
};

const b64decode = (s: string): Uint8Array<ArrayBuffer> => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

/**
 * Verifies a webhook the service sent (Standard Webhooks: webhook-id,
 * webhook-timestamp, webhook-signature) against its raw body and the
 * endpoint's secret (whsec_...), and returns the parsed event. Throws
 * WebhookVerificationError when a header is missing, the timestamp is outside
 * the window, or no signature matches. Pass the body exactly as received.
 */
export async function verifyWebhook(payload: string | Uint8Array, headers: WebhookHeaders, secret: string, opts: VerifyOptions = {}): Promise<WebhookEvent> {
  const id = header(headers, "webhook-id");
  const ts = header(headers, "webhook-timestamp");
  const sigs = header(headers, "webhook-signature");
  if (!id || !ts || !sigs) throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature header");
  if (!/^\d+$/.test(ts)) throw new WebhookVerificationError("invalid webhook-timestamp");
  const now = Math.floor((opts.now?.() ?? new Date()).getTime() / 1000);
  const tol = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const at = Number(ts);
  if (now - at > tol) throw new WebhookVerificationError("timestamp too old");
  if (at - now > tol) throw new WebhookVerificationError("timestamp too far in the future");
  let key: Uint8Array<ArrayBuffer>;
  try {
    key = b64decode(secret.replace(/^whsec_/, ""));
  } catch {
    throw new WebhookVerificationError("invalid secret");
  }
  if (key.length === 0) throw new WebhookVerificationError("invalid secret");
  const body = typeof payload === "string" ? new TextEncoder().encode(payload) : payload;
  const prefix = new TextEncoder().encode(`${id}.${ts}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  const k = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  for (const s of sigs.split(" ")) {
    const [version, sig] = s.split(",", 2);
    if (version !== "v1" || !sig) continue;
    let got: Uint8Array<ArrayBuffer>;
    try {
      got = b64decode(sig);
    } catch {
      continue;
    }
    // crypto.subtle.verify compares in constant time.
    if (await crypto.subtle.verify("HMAC", k, got, signed)) {
      try {
        return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent;
      } catch {
        throw new WebhookVerificationError("payload is not JSON");
      }
    }
  }
  throw new WebhookVerificationError("no matching signature");
}
