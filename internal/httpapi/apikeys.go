package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// APIKey is an API key record. Key is present only in the answer that
// creates it.
type APIKey struct {
	Object     string   `json:"object" enum:"api_key"`
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Key        string   `json:"key,omitempty" doc:"The key itself: shown once, at creation"`
	Hint       string   `json:"hint" doc:"Prefix and last four characters"`
	Scopes     []string `json:"scopes"`
	CreatedAt  string   `json:"created_at" format:"date-time"`
	LastUsedAt *string  `json:"last_used_at" format:"date-time" doc:"Updated at most once a minute"`
	RevokedAt  *string  `json:"revoked_at" format:"date-time"`
}

func apiKeyOf(k *apikeys.Key) APIKey {
	return APIKey{Object: "api_key", ID: k.ID, Name: k.Name, Hint: k.Hint, Scopes: k.Scopes, CreatedAt: wire.Time(k.CreatedAt),
		LastUsedAt: wire.OptTime(k.LastUsedAt), RevokedAt: wire.OptTime(k.RevokedAt)}
}

type apiKeyOut struct {
	Location string `header:"Location"`
	Body     APIKey
}

func (s *server) registerAPIKeys() {
	tags := []string{"API keys"}
	huma.Register(s.api, huma.Operation{
		OperationID: "create-api-key", Method: http.MethodPost, Path: "/v1/api-keys", Tags: tags,
		Summary:       "Create an API key",
		Description:   "The answer holds the key itself, once; it is stored only as a hash (a retry with the same Idempotency-Key replays the answer without it). A key acts as your account with its own scopes, which must be within the calling credential's. Scope: write.",
		Security:      requires(auth.ScopeWrite),
		DefaultStatus: http.StatusCreated,
	}, func(ctx context.Context, in *struct {
		Body struct {
			Name   string   `json:"name" minLength:"1" maxLength:"100"`
			Scopes []string `json:"scopes,omitempty" maxItems:"6" doc:"Default: read"`
		}
	}) (*apiKeyOut, error) {
		p, err := accountManager(ctx)
		if err != nil {
			return nil, err
		}
		k, secret, err := s.keys.Create(ctx, apikeys.Spec{UserID: p.UserID, Name: in.Body.Name,
			Scopes: in.Body.Scopes, Within: p.Scopes})
		if err != nil {
			return nil, err
		}
		out := apiKeyOf(k)
		out.Key = secret
		keepSecretOut(ctx, "key")
		return &apiKeyOut{Location: "/v1/api-keys/" + k.ID, Body: out}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "list-api-keys", Method: http.MethodGet, Path: "/v1/api-keys", Tags: tags,
		Summary:     "List your API keys",
		Description: "Oldest first, revoked ones included; never the keys themselves. Scope: read.",
		Security:    requires(auth.ScopeRead),
	}, func(ctx context.Context, in *struct{ ListParams }) (*struct{ Body List[APIKey] }, error) {
		p, err := accountManager(ctx)
		if err != nil {
			return nil, err
		}
		if !validCursor("key_", in.Cursor) {
			return nil, apperr.InvalidParam("cursor", "invalid_cursor", "cursor is not one this list returned")
		}
		ks, err := s.keys.List(ctx, p.UserID, in.Cursor, in.Limit+1)
		if err != nil {
			return nil, err
		}
		return &struct{ Body List[APIKey] }{Body: listOf(ks, in.Limit, func(k *apikeys.Key) string { return k.ID }, apiKeyOf)}, nil
	})

	type keyIn struct {
		ID string `path:"id" maxLength:"64"`
	}
	huma.Register(s.api, huma.Operation{
		OperationID: "get-api-key", Method: http.MethodGet, Path: "/v1/api-keys/{id}", Tags: tags,
		Summary: "An API key", Description: "Scope: read.", Security: requires(auth.ScopeRead),
	}, func(ctx context.Context, in *keyIn) (*struct{ Body APIKey }, error) {
		p, err := accountManager(ctx)
		if err != nil {
			return nil, err
		}
		k, err := s.keys.Get(ctx, p.UserID, in.ID)
		if err != nil {
			return nil, err
		}
		return &struct{ Body APIKey }{Body: apiKeyOf(k)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "revoke-api-key", Method: http.MethodDelete, Path: "/v1/api-keys/{id}", Tags: tags,
		Summary:     "Revoke an API key",
		Description: "The key stops working at once, on every node. Answers the revoked record. Scope: write.",
		Security:    requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *keyIn) (*struct{ Body APIKey }, error) {
		p, err := accountManager(ctx)
		if err != nil {
			return nil, err
		}
		k, err := s.keys.Revoke(ctx, p.UserID, in.ID)
		if err != nil {
			return nil, err
		}
		return &struct{ Body APIKey }{Body: apiKeyOf(k)}, nil
	})
}
