import { Operations } from "./operations.js";
import { type ClientOptions, type TokenSet } from "./core.js";
import { OAuthHelper } from "./oauth.js";
import { MatchpointError } from "./errors.js";

/**
 * The Matchpoint API client: one method per operation of the API (named
 * after its operationId), auto-pagination (`...AutoPaging`), retries, typed
 * errors and the OAuth code flow.
 *
 *     const mp = new Matchpoint({ baseURL: "https://api.matchpoint.example", apiKey: "mpk_..." });
 *     const me = await mp.getMe();
 */
export class Matchpoint extends Operations {
  /** The OAuth code flow with PKCE and refreshes (needs the oauth option). */
  readonly oauth: OAuthHelper;

  constructor(opts: ClientOptions) {
    super(opts);
    this.oauth = new OAuthHelper({
      baseURL: this.baseURL,
      oauthOptions: () => {
        if (!this.opts.oauth) throw new MatchpointError("the client has no oauth options");
        return this.opts.oauth;
      },
      exchange: (form) => this.tokenRequest(form),
      refresh: () => this.refreshTokens(),
    });
  }
}

export default Matchpoint;
export { Matchpoint as Client };
export * from "./errors.js";
export { verifyWebhook, DEFAULT_TOLERANCE_SECONDS, type VerifyOptions, type WebhookHeaders } from "./webhooks.js";
export { createPkce, randomToken, OAuthHelper, type AuthorizeRequest, type AuthorizeURL } from "./oauth.js";
export { OPERATION_IDS, WEBHOOK_EVENT_TYPES, type WebhookEvent, type WebhookEvents } from "./operations.js";
export type { ClientOptions, RequestOptions, OAuthClientOptions, TokenSet } from "./core.js";
export type { paths, components, operations, webhooks } from "./schema.js";
export type Schemas = import("./schema.js").components["schemas"];
export { VERSION } from "./version.js";
export { readEvents, type ServerSentEvent } from "./sse.js";
