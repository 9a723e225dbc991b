package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
)

// authServerMetadata is RFC 8414's document, from which standard clients
// (AppAuth and the like) configure themselves.
type authServerMetadata struct {
	Issuer                                    string   `json:"issuer"`
	AuthorizationEndpoint                     string   `json:"authorization_endpoint"`
	TokenEndpoint                             string   `json:"token_endpoint"`
	RevocationEndpoint                        string   `json:"revocation_endpoint"`
	IntrospectionEndpoint                     string   `json:"introspection_endpoint"`
	ScopesSupported                           []string `json:"scopes_supported"`
	ResponseTypesSupported                    []string `json:"response_types_supported"`
	ResponseModesSupported                    []string `json:"response_modes_supported"`
	GrantTypesSupported                       []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported         []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported    []string `json:"revocation_endpoint_auth_methods_supported"`
	IntrospectionEndpointAuthMethodsSupported []string `json:"introspection_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported             []string `json:"code_challenge_methods_supported"`
	ServiceDocumentation                      string   `json:"service_documentation"`
	// RFC 9207: authorization responses carry iss, equal to Issuer.
	AuthorizationResponseIssParameterSupported bool `json:"authorization_response_iss_parameter_supported"`
}

// discovery is GET /.well-known/oauth-authorization-server. The issuer is
// the base URL, with no path, so the document sits at the well-known
// address RFC 8414 section 3 derives from it.
func (s *server) discovery() http.Handler {
	scopes := make([]string, 0, len(auth.AllScopes))
	for _, si := range auth.AllScopes {
		scopes = append(scopes, si.Name)
	}
	auths := []string{"client_secret_post", "client_secret_basic", "none"}
	md := authServerMetadata{
		Issuer:                s.baseURL,
		AuthorizationEndpoint: s.baseURL + "/oauth/authorize", TokenEndpoint: s.baseURL + "/oauth/token",
		RevocationEndpoint: s.baseURL + "/oauth/revoke", IntrospectionEndpoint: s.baseURL + "/oauth/introspect",
		ScopesSupported: scopes, ResponseTypesSupported: []string{"code"}, ResponseModesSupported: []string{"query"},
		GrantTypesSupported:               oauth.KnownGrantTypes,
		TokenEndpointAuthMethodsSupported: auths, RevocationEndpointAuthMethodsSupported: auths,
		IntrospectionEndpointAuthMethodsSupported:  auths,
		CodeChallengeMethodsSupported:              []string{"S256"},
		ServiceDocumentation:                       s.baseURL + "/docs",
		AuthorizationResponseIssParameterSupported: true,
	}
	body, _ := json.MarshalIndent(md, "", "  ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Public and the same for everyone: browsers and caches may keep it.
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_, _ = w.Write(body)
	})
}
