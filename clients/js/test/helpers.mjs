// What the integration tests share: the server's credentials from the
// environment (test.sh sets them), a browser that signs in through the
// service's HTML forms, an HTTPS webhook receiver, and a proxy that answers
// 503 once.
import https from "node:https";
import http from "node:http";
import { readFileSync } from "node:fs";

export function env() {
  const need = ["MATCHPOINT_BASE_URL", "MATCHPOINT_API_KEY", "MATCHPOINT_CLIENT_ID", "MATCHPOINT_CLIENT_SECRET", "MATCHPOINT_REDIRECT_URI", "MATCHPOINT_USER_LOGIN", "MATCHPOINT_USER_PASSWORD", "MATCHPOINT_TEST_TLS_CERT", "MATCHPOINT_TEST_TLS_KEY"];
  const missing = need.filter((k) => !process.env[k]);
  if (missing.length) throw new Error(`integration tests need ${missing.join(", ")} (run test.sh)`);
  const e = Object.fromEntries(need.map((k) => [k, process.env[k]]));
  e.MATCHPOINT_BASE_URL = e.MATCHPOINT_BASE_URL.replace(/\/+$/, "");
  return e;
}

const entities = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const unescape = (s) =>
  s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (_, e) =>
    e[0] === "#" ? String.fromCodePoint(e[1] === "x" ? parseInt(e.slice(2), 16) : Number(e.slice(1))) : entities[e]);
const attr = (tag, name) => {
  const m = tag.match(new RegExp(`\\s${name}="([^"]*)"`));
  return m ? unescape(m[1]) : undefined;
};

/** The forms of an HTML page: action, hidden and text fields, submit buttons. */
export function forms(html) {
  const out = [];
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)) {
    const f = { action: attr(m[1], "action"), fields: {}, buttons: {} };
    for (const t of m[2].matchAll(/<input\b[^>]*>/g)) {
      const name = attr(t[0], "name");
      if (name) f.fields[name] = attr(t[0], "value") ?? "";
    }
    for (const t of m[2].matchAll(/<button\b[^>]*>/g)) {
      const name = attr(t[0], "name");
      if (name) (f.buttons[name] ??= []).push(attr(t[0], "value") ?? "");
    }
    out.push(f);
  }
  return out;
}

/**
 * A browser: keeps cookies, follows redirects on the service, stops at a
 * redirect elsewhere (the app's redirect_uri) and posts forms with Origin,
 * as a person's browser does.
 */
export class Browser {
  constructor(base) {
    this.base = base;
    this.jar = new Map();
  }
  async go(url, init = {}) {
    for (let hops = 0; hops < 10; hops++) {
      const headers = { ...(init.headers ?? {}) };
      if (this.jar.size) headers.Cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join("; ");
      const res = await fetch(url, { ...init, headers, redirect: "manual" });
      if (process.env.DEBUG_BROWSER) console.error(init.method ?? "GET", url, res.status, res.headers.get("location"), init.body);
      for (const c of res.headers.getSetCookie()) {
        const [kv] = c.split(";");
        const i = kv.indexOf("=");
        this.jar.set(kv.slice(0, i).trim(), kv.slice(i + 1).trim());
      }
      const body = await res.text();
      if (res.status < 300 || res.status >= 400) return { status: res.status, body, url };
      const loc = new URL(res.headers.get("location"), url);
      if (loc.origin !== new URL(this.base).origin) return { status: res.status, body, url, location: loc.toString() };
      url = loc.toString();
      init = {};
    }
    throw new Error("too many redirects");
  }
  submit(form, set) {
    const body = new URLSearchParams({ ...form.fields, ...set }).toString();
    return this.go(this.base + form.action, {
      method: "POST",
      body,
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: this.base },
    });
  }
  /** Loads authURL, signs in and allows; returns the redirect_uri address the service sent the browser to. */
  async authorize(authURL, login, password) {
    let page = await this.go(authURL);
    for (let i = 0; i < 4 && !page.location; i++) {
      if (page.status !== 200) throw new Error(`authorize: status ${page.status}: ${page.body.slice(0, 500)}`);
      const fs = forms(page.body);
      const loginForm = fs.find((f) => f.action === "/login");
      const consent = fs.find((f) => f.action === "/oauth/authorize");
      if (loginForm) page = await this.submit(loginForm, { login, password });
      else if (consent) page = await this.submit(consent, { decision: "allow" });
      else throw new Error(`authorize: no login or consent form:\n${page.body.slice(0, 1000)}`);
    }
    if (!page.location) throw new Error("authorize: the browser never left the service");
    return page.location;
  }
}

/** An HTTPS webhook endpoint on 127.0.0.1: answers challenges, keeps deliveries. */
export async function startReceiver(certFile, keyFile) {
  const got = [];
  const waiters = [];
  const server = https.createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      let probe = {};
      try {
        probe = JSON.parse(raw.toString("utf8"));
      } catch {}
      if (probe.type === "webhook.verification") {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ challenge: probe.challenge }));
        return;
      }
      got.push({ headers: req.headers, body: raw });
      res.writeHead(200);
      res.end();
      for (const w of waiters.splice(0)) w();
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `https://127.0.0.1:${server.address().port}/hook`,
    deliveries: got,
    /** Waits until pred holds for a delivery (20 s at most). */
    async waitFor(pred, ms = 20000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const hit = got.find(pred);
        if (hit) return hit;
        if (Date.now() > deadline) throw new Error(`no matching delivery in ${ms} ms (${got.length} received)`);
        await new Promise((r) => {
          waiters.push(r);
          setTimeout(r, 200);
        });
      }
    },
    close: () => new Promise((r) => { server.close(r); server.closeAllConnections(); }),
  };
}

/**
 * A proxy to the real server. fail(n, status) makes the next n requests answer 503 (or status)
 * with Retry-After: 1 after the real server handled them (so a retried POST
 * without its Idempotency-Key would take effect twice).
 */
export async function startProxy(target) {
  const t = new URL(target);
  const seen = [];
  let failures = 0;
  let failStatus = 503;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers });
      const up = (t.protocol === "https:" ? https : http).request({ host: t.hostname, port: t.port || (t.protocol === "https:" ? 443 : 80), method: req.method, path: req.url, headers: { ...req.headers, host: t.host } }, (ur) => {
        const body = [];
        ur.on("data", (c) => body.push(c));
        ur.on("end", () => {
          if (failures > 0) {
            failures--;
            res.writeHead(failStatus, { "Content-Type": "application/problem+json", "Retry-After": "1" });
            res.end(JSON.stringify({ type: "about:blank", title: "Unavailable", status: failStatus, code: failStatus === 429 ? "rate_limited" : "unavailable" }));
            return;
          }
          res.writeHead(ur.statusCode, ur.headers);
          res.end(Buffer.concat(body));
        });
      });
      up.on("error", (e) => {
        res.writeHead(502);
        res.end(String(e));
      });
      up.end(Buffer.concat(chunks));
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    seen,
    fail(n, status = 503) {
      failures = n;
      failStatus = status;
    },
    close: () => new Promise((r) => { server.close(r); server.closeAllConnections(); }),
  };
}
