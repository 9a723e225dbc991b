import { VERSION } from "./version.js";
import { APIConnectionError, APIConnectionTimeoutError, MatchpointError, OAuthError, type Problem } from "./errors.js";

/** A token set of the OAuth token endpoint, with when the access token expires. */
export interface TokenSet {
  access_token: string;
  token_type?: string;
  refresh_token?: string;
  scope?: string;
  expires_in?: number;
  /** Milliseconds since the epoch when access_token expires (from expires_in). */
  expires_at?: number;
}

/** How the client signs in as an OAuth client. */
export interface OAuthClientOptions {
  clientId: string;
  /** Confidential clients only; public clients (apps) use PKCE alone. */
  clientSecret?: string;
  redirectUri?: string;
  /** A token set kept from an earlier run. */
  tokens?: TokenSet;
  /** Called with every new token set (after a code exchange or a refresh), to persist it. */
  onTokens?: (tokens: TokenSet) => void | Promise<void>;
}

export interface ClientOptions {
  /** Address of the service, e.g. https://api.matchpoint.example. */
  baseURL: string;
  /** An API key (mpk_...), sent as a bearer token. */
  apiKey?: string;
  /** An OAuth access token; with oauth, refreshed when it expires. */
  accessToken?: string;
  /** The OAuth client this app is, for the code flow and refreshes. */
  oauth?: OAuthClientOptions;
  /** Milliseconds before a request is abandoned (60000). */
  timeout?: number;
  /** Retries after the first attempt (2). */
  maxRetries?: number;
  /** Headers sent with every request. */
  defaultHeaders?: Record<string, string>;
  /** The fetch to use (the global one by default). */
  fetch?: typeof fetch;
}

/** Per-request settings. */
export interface RequestOptions {
  timeout?: number;
  maxRetries?: number;
  headers?: Record<string, string>;
  /** The Idempotency-Key of a POST; one is generated when absent. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface RequestSpec {
  method: string;
  path: string;
  query?: Record<string, unknown>;
  body?: unknown;
  bodyType?: "json" | "form";
  /** json: parse the answer; raw: return the Response. */
  accept?: "json" | "raw";
  operationId?: string;
  /** No credential is sent (the OAuth token endpoint authenticates the client itself). */
  noAuth?: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The HTTP core every generated method goes through. */
export class Core {
  readonly baseURL: string;
  apiKey: string | undefined;
  protected opts: ClientOptions;
  protected tokens: TokenSet | undefined;
  private refreshing: Promise<TokenSet> | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(opts: ClientOptions) {
    if (!opts || !opts.baseURL) throw new MatchpointError("baseURL is required");
    this.opts = opts;
    this.baseURL = opts.baseURL.replace(/\/+$/, "");
    this.apiKey = opts.apiKey;
    this.tokens = opts.oauth?.tokens ?? (opts.accessToken ? { access_token: opts.accessToken } : undefined);
    this.fetchImpl = opts.fetch ?? ((...a: Parameters<typeof fetch>) => fetch(...a));
  }

  /** The current OAuth token set, if any. */
  get tokenSet(): TokenSet | undefined {
    return this.tokens;
  }

  /** Sends one API request with retries, and returns its parsed answer. */
  async request<T>(spec: RequestSpec, options: RequestOptions = {}): Promise<T> {
    const url = new URL(this.baseURL + spec.path);
    for (const [k, v] of Object.entries(spec.query ?? {})) {
      if (v === undefined || v === null) continue;
      if (Array.isArray(v)) for (const x of v) url.searchParams.append(k, String(x));
      else url.searchParams.set(k, String(v));
    }
    const headers: Record<string, string> = {
      Accept: spec.accept === "raw" ? "*/*" : "application/json",
      "User-Agent": `matchpoint-js/${VERSION}`,
      ...this.opts.defaultHeaders,
      ...options.headers,
    };
    let payload: string | undefined;
    if (spec.body !== undefined) {
      if (spec.bodyType === "form") {
        headers["Content-Type"] = "application/x-www-form-urlencoded";
        payload = new URLSearchParams(Object.entries(spec.body as Record<string, unknown>).filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => [k, String(v)])).toString();
      } else {
        headers["Content-Type"] = "application/json";
        payload = JSON.stringify(spec.body);
      }
    }
    // One key for every attempt, so a retried POST takes effect once.
    if (spec.method === "POST") headers["Idempotency-Key"] = options.idempotencyKey ?? `mpjs_${crypto.randomUUID()}`;
    const maxRetries = options.maxRetries ?? this.opts.maxRetries ?? 2;
    const timeout = options.timeout ?? this.opts.timeout ?? 60_000;
    let refreshedOn401 = false;
    for (let attempt = 0; ; attempt++) {
      if (!spec.noAuth) {
        const auth = await this.authorization();
        if (auth) headers.Authorization = auth;
      }
      let res: Response;
      const ctl = new AbortController();
      const timer = setTimeout(() => ctl.abort(), timeout);
      const onAbort = () => ctl.abort();
      options.signal?.addEventListener("abort", onAbort);
      try {
        res = await this.fetchImpl(url, { method: spec.method, headers, body: payload, signal: ctl.signal });
      } catch (err) {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        if (options.signal?.aborted) throw err;
        if (attempt < maxRetries) {
          await sleep(this.backoff(attempt, undefined));
          continue;
        }
        if (ctl.signal.aborted) throw new APIConnectionTimeoutError(`${spec.method} ${spec.path}: no answer within ${timeout} ms`);
        throw new APIConnectionError(`${spec.method} ${spec.path}: ${(err as Error).message ?? err}`);
      }
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      if (res.ok) {
        if (spec.accept === "raw") return res as unknown as T;
        const text = await res.text();
        return (text ? JSON.parse(text) : undefined) as T;
      }
      const text = await res.text();
      let problem: Problem | undefined;
      try {
        problem = text ? JSON.parse(text) : undefined;
      } catch {
        problem = { detail: text.slice(0, 500) };
      }
      // An expired or revoked access token: refresh once and try again.
      if (res.status === 401 && !spec.noAuth && !refreshedOn401 && this.canRefresh()) {
        refreshedOn401 = true;
        await this.refreshTokens(headers.Authorization);
        attempt--;
        continue;
      }
      if (attempt < maxRetries && this.shouldRetry(res, problem)) {
        await sleep(this.backoff(attempt, res.headers));
        continue;
      }
      throw MatchpointError.fromResponse(res.status, problem, res.headers);
    }
  }

  /** Whether an answer is worth another attempt. */
  protected shouldRetry(res: Response, problem: Problem | undefined): boolean {
    const s = res.status;
    if (res.headers.get("x-should-retry") === "false") return false;
    return s === 408 || s === 429 || s >= 500 || (s === 409 && problem?.code === "idempotency_in_progress");
  }

  /** Milliseconds to wait before retry number attempt+1: Retry-After when given, else exponential with jitter. */
  protected backoff(attempt: number, headers: Headers | undefined): number {
    const ra = headers?.get("retry-after");
    if (ra) {
      const secs = Number(ra);
      const ms = Number.isFinite(secs) ? secs * 1000 : Date.parse(ra) - Date.now();
      if (Number.isFinite(ms) && ms >= 0 && ms <= 60_000) return ms;
    }
    const base = Math.min(500 * 2 ** attempt, 8000);
    return base * (0.75 + Math.random() * 0.25);
  }

  /** Follows next_cursor from page to page and yields every item. */
  protected async *paginate<P extends { data?: readonly unknown[] | null; next_cursor?: string; has_more?: boolean }>(
    fetchPage: (cursor: string | undefined) => Promise<P>,
    cursor: string | undefined,
  ): AsyncGenerator<NonNullable<P["data"]>[number]> {
    for (;;) {
      const page = await fetchPage(cursor);
      for (const item of page.data ?? []) yield item as NonNullable<P["data"]>[number];
      if (!page.has_more || !page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }

  private canRefresh(): boolean {
    return !!(this.opts.oauth && this.tokens?.refresh_token);
  }

  private async authorization(): Promise<string | undefined> {
    if (this.tokens) {
      // Refresh a little before expiry rather than fail a request.
      if (this.canRefresh() && this.tokens.expires_at && this.tokens.expires_at - Date.now() < 30_000) {
        await this.refreshTokens(`Bearer ${this.tokens.access_token}`);
      }
      return `Bearer ${this.tokens.access_token}`;
    }
    return this.apiKey ? `Bearer ${this.apiKey}` : undefined;
  }

  /**
   * Refreshes the token set once, however many calls ask at the same time:
   * they share one request. stale is the Authorization that failed; when the
   * tokens changed since, another call already refreshed them.
   */
  protected async refreshTokens(stale?: string): Promise<TokenSet> {
    if (this.refreshing) return this.refreshing;
    if (stale && this.tokens && stale !== `Bearer ${this.tokens.access_token}`) return this.tokens;
    const rt = this.tokens?.refresh_token;
    if (!rt) throw new MatchpointError("no refresh token to refresh with");
    this.refreshing = this.tokenRequest({ grant_type: "refresh_token", refresh_token: rt }).finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** Calls the token endpoint as the OAuth client, and keeps the token set it answers. */
  protected async tokenRequest(form: Record<string, string>): Promise<TokenSet> {
    const o = this.opts.oauth;
    if (!o) throw new MatchpointError("the client has no oauth options");
    const body: Record<string, string> = { ...form, client_id: o.clientId };
    if (o.clientSecret) body.client_secret = o.clientSecret;
    let ts: TokenSet;
    try {
      ts = await this.request<TokenSet>({ method: "POST", path: "/oauth/token", body, bodyType: "form", noAuth: true });
    } catch (err) {
      if (err instanceof MatchpointError && err.problem && typeof (err.problem as { error?: unknown }).error === "string") {
        throw new OAuthError(err.status, err.problem as { error?: string; error_description?: string }, err.headers ?? new Headers());
      }
      throw err;
    }
    // A refresh answer without a refresh token keeps the old one.
    if (!ts.refresh_token && this.tokens?.refresh_token && form.grant_type === "refresh_token") ts.refresh_token = this.tokens.refresh_token;
    if (ts.expires_in) ts.expires_at = Date.now() + ts.expires_in * 1000;
    this.tokens = ts;
    await o.onTokens?.(ts);
    return ts;
  }
}
