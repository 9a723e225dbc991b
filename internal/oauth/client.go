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
	// FirstParty is loaded with the client: the service's own applications,
	// owned by the system account, may do what third-party ones may not.
	FirstParty bool
	CreatedAt  time.Time
	RevokedAt  *time.Time
}

// AllowsGrant reports whether the client is registered for a grant type.
func (c *Client) AllowsGrant(g string) bool { return slices.Contains(c.GrantTypes, g) }

// redirectParams are the parameters the service adds to a redirect URI. A
// registered URI must not carry them already, or a response could hold two
// codes or two states (or an attacker's iss, RFC 9207).
var redirectParams = []string{"code", "state", "error", "error_description", "error_uri", "iss"}

// CheckRedirectURI applies the registration rules of DECISIONS.md: https
// anywhere; http only on loopback (RFC 8252, native apps and development);
// private-use schemes in reverse-domain form for mobile apps. Never a
// fragment, user info, a wildcard, or a parameter the response adds.
func CheckRedirectURI(raw string) string {
	if !cleanString(raw) {
		return "must be valid UTF-8 without NUL characters"
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return "must be an absolute URI"
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return "must not have a fragment"
	}
	if u.User != nil {
		return "must not hold a user name or password"
	}
	if strings.Contains(raw, "*") {
		return "must not hold a wildcard (*): register every URI in full"
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "has a query that cannot be parsed"
	}
	for _, p := range redirectParams {
		if _, ok := q[p]; ok {
			return "must not have a " + p + " query parameter: the response adds it"
		}
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
