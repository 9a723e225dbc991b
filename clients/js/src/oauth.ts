import { MatchpointError } from "./errors.js";
import type { TokenSet } from "./core.js";

const b64url = (bytes: Uint8Array): string => {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
};

/** A random URL-safe string of n random bytes. */
export function randomToken(n = 32): string {
  return b64url(crypto.getRandomValues(new Uint8Array(n)));
}

/** A PKCE pair: keep the verifier, send the S256 challenge. */
export async function createPkce(): Promise<{ codeVerifier: string; codeChallenge: string }> {
  const codeVerifier = randomToken(32); // 43 characters, the least RFC 7636 allows
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(codeVerifier));
  return { codeVerifier, codeChallenge: b64url(new Uint8Array(digest)) };
}

export interface AuthorizeRequest {
  /** Space-separated scopes, e.g. "read profile". */
  scope?: string;
  /** Defaults to the client's redirectUri. */
  redirectUri?: string;
  /** Generated when absent; check it on the callback. */
  state?: string;
}

export interface AuthorizeURL {
  url: string;
  /** Compare with the state of the callback. */
  state: string;
  /** Keep it until the code exchange. */
  codeVerifier: string;
}

/** The part of the client the helpers need. */
interface Host {
  baseURL: string;
  oauthOptions(): { clientId: string; redirectUri?: string };
  exchange(form: Record<string, string>): Promise<TokenSet>;
  refresh(): Promise<TokenSet>;
}

/** OAuth 2.0 authorization code flow with PKCE, for client.oauth. */
export class OAuthHelper {
  constructor(private readonly host: Host) {}

  /** The address to send the person to, with a fresh PKCE pair and state. */
  async authorizeURL(req: AuthorizeRequest = {}): Promise<AuthorizeURL> {
    const o = this.host.oauthOptions();
    const redirectUri = req.redirectUri ?? o.redirectUri;
    if (!redirectUri) throw new MatchpointError("redirectUri is required");
    const { codeVerifier, codeChallenge } = await createPkce();
    const state = req.state ?? randomToken(16);
    const u = new URL(this.host.baseURL + "/oauth/authorize");
    u.searchParams.set("response_type", "code");
    u.searchParams.set("client_id", o.clientId);
    u.searchParams.set("redirect_uri", redirectUri);
    if (req.scope) u.searchParams.set("scope", req.scope);
    u.searchParams.set("state", state);
    u.searchParams.set("code_challenge", codeChallenge);
    u.searchParams.set("code_challenge_method", "S256");
    return { url: u.toString(), state, codeVerifier };
  }

  /**
   * Reads the callback address the person came back with: checks state and
   * returns the code, or throws the error the service sent.
   */
  parseCallback(callbackURL: string, expectedState: string): string {
    const u = new URL(callbackURL);
    const err = u.searchParams.get("error");
    if (err) throw new MatchpointError(`authorization failed: ${err} ${u.searchParams.get("error_description") ?? ""}`.trim());
    if (u.searchParams.get("state") !== expectedState) throw new MatchpointError("authorization callback state does not match");
    const code = u.searchParams.get("code");
    if (!code) throw new MatchpointError("authorization callback without code");
    return code;
  }

  /** Exchanges the code for a token set, which the client then uses. */
  exchangeCode(code: string, codeVerifier: string, redirectUri?: string): Promise<TokenSet> {
    const ru = redirectUri ?? this.host.oauthOptions().redirectUri;
    if (!ru) throw new MatchpointError("redirectUri is required");
    return this.host.exchange({ grant_type: "authorization_code", code, code_verifier: codeVerifier, redirect_uri: ru });
  }

  /** Refreshes the token set now (concurrent calls share one refresh). */
  refresh(): Promise<TokenSet> {
    return this.host.refresh();
  }
}
