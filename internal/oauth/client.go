package oauth

import (
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Grant types.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantRefreshToken      = "refresh_token"
)

// KnownGrantTypes are the grant types the token endpoint serves.
var KnownGrantTypes = []string{GrantAuthorizationCode, GrantRefreshToken}

// Client is a registered OAuth application.
type Client struct {
	ID           string
	Name         string
	OwnerID      string
	OwnerTier    string // loaded with the client: the owner's tier gates the admin scope
	SecretHash   string // empty for public clients
	SecretHint   string
	RedirectURIs []string
	Scopes       []string // scopes the client may request
	GrantTypes   []string
	Public       bool // cannot keep a secret (mobile, single-page); must use PKCE
	CreatedAt    time.Time
	RevokedAt    *time.Time
}

// AllowsGrant reports whether the client is registered for a grant type.
func (c *Client) AllowsGrant(g string) bool { return slices.Contains(c.GrantTypes, g) }

// CheckRedirectURI applies the registration rules of DECISIONS.md: https
// anywhere; http only on loopback (RFC 8252, native apps and development);
// private-use schemes in reverse-domain form for mobile apps. Never a fragment.
func CheckRedirectURI(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return "must be an absolute URI"
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return "must not have a fragment"
	}
	switch u.Scheme {
	case "https":
		if u.Host == "" {
			return "needs a host"
		}
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); !(host == "localhost" || (ip != nil && ip.IsLoopback())) {
			return "http is allowed only for loopback hosts (127.0.0.1, [::1], localhost); use https"
		}
	default:
		// Private-use scheme (RFC 8252 7.1): reverse domain name, like
		// com.example.app:/callback, so it cannot collide with another app's.
		if !strings.Contains(u.Scheme, ".") {
			return "custom schemes must be a reverse domain name like com.example.app"
		}
		if u.Scheme == "javascript" || u.Scheme == "data" || u.Scheme == "file" {
			return "scheme not allowed"
		}
	}
	return ""
}
