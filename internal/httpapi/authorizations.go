package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// Authorization is an application the user has let act for them.
type Authorization struct {
	Object     string   `json:"object" enum:"authorization"`
	ClientID   string   `json:"client_id"`
	ClientName string   `json:"client_name"`
	Scopes     []string `json:"scopes" doc:"Every scope the user has granted the application"`
	UpdatedAt  string   `json:"updated_at" format:"date-time"`
}

func (s *server) registerAuthorizations() {
	tags := []string{"Users and profiles"}
	huma.Register(s.api, huma.Operation{
		OperationID: "list-authorizations", Method: http.MethodGet, Path: "/v1/users/me/authorizations", Tags: tags,
		Summary:     "Applications you have authorized",
		Description: "Each OAuth application you consented to, with the scopes granted. Scope: read or profile; API keys and first-party clients only.",
		Security:    requires(auth.ScopeRead, auth.ScopeProfile),
	}, func(ctx context.Context, _ *struct{}) (*struct{ Body List[Authorization] }, error) {
		p, err := accountManager(ctx)
		if err != nil {
			return nil, err
		}
		apps, err := s.oauth.AuthorizedApps(ctx, p.UserID)
		if err != nil {
			return nil, err
		}
		out := List[Authorization]{Object: "list", Data: make([]Authorization, 0, len(apps))}
		for _, a := range apps {
			out.Data = append(out.Data, Authorization{Object: "authorization", ClientID: a.ClientID, ClientName: a.ClientName,
				Scopes: a.Scopes, UpdatedAt: wire.Time(a.UpdatedAt)})
		}
		return &struct{ Body List[Authorization] }{Body: out}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "revoke-authorization", Method: http.MethodDelete, Path: "/v1/users/me/authorizations/{client_id}", Tags: tags,
		Summary:       "Revoke an application's access",
		Description:   "Every token the application holds for you stops working at once, and its next request for access asks you again. Scope: write or profile; API keys and first-party clients only.",
		Security:      requires(auth.ScopeWrite, auth.ScopeProfile),
		DefaultStatus: http.StatusNoContent,
	}, func(ctx context.Context, in *struct {
		ClientID string `path:"client_id" maxLength:"64"`
	}) (*struct{}, error) {
		p, err := accountManager(ctx)
		if err != nil {
			return nil, err
		}
		return nil, s.oauth.RevokeAccess(ctx, p.UserID, in.ClientID)
	})
}
