package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/oauth"
)

// TokenResult holds the token endpoint's grant rates.
type TokenResult struct {
	Engine   string
	Exchange Stats
	Refresh  Stats
}

// Token measures POST /oauth/token: authorization-code exchanges, then
// refresh-token rotations, each over real HTTP with client authentication.
// Codes are issued beforehand (not timed); each refresh rotates its family,
// so every request does the full write of a real one.
func Token(ctx context.Context, o Options, out io.Writer) (*TokenResult, error) {
	e, err := start(ctx, o)
	if err != nil {
		return nil, err
	}
	defer e.close()
	if o.Grants < o.Concurrency {
		return nil, fmt.Errorf("bench: --grants must be at least --concurrency")
	}
	fmt.Fprintf(out, "bench token: %s, concurrency %d, %d grants of each type\n", e.Engine, o.Concurrency, o.Grants)
	codes := make([]string, o.Grants)
	for i := range codes {
		if codes[i], err = e.code(ctx); err != nil {
			return nil, err
		}
	}
	c := newHTTPClient(o.Concurrency)
	tokenURL := e.url + "/oauth/token"
	refresh := make([]string, o.Grants)
	var next atomic.Int64
	res := &TokenResult{Engine: e.Engine}
	res.Exchange = run("authorization_code exchange", o.Concurrency, time.Hour, func(int) (bool, bool) {
		i := int(next.Add(1)) - 1
		if i >= len(codes) {
			return false, false
		}
		status, body := postForm(c, tokenURL, url.Values{"grant_type": {"authorization_code"}, "client_id": {e.client.ID},
			"client_secret": {e.secret}, "code": {codes[i]}, "redirect_uri": {e.client.RedirectURIs[0]}})
		var set oauth.TokenSet
		if status != 200 || json.Unmarshal(body, &set) != nil {
			return false, true
		}
		refresh[i] = set.RefreshToken
		return true, true
	})
	fmt.Fprintf(out, "  %s\n", res.Exchange)

	// Worker w rotates only the families f with f % concurrency == w, round
	// robin, so no two requests ever race for one token.
	var done atomic.Int64
	pos := make([]int, o.Concurrency)
	res.Refresh = run("refresh_token rotation", o.Concurrency, time.Hour, func(w int) (bool, bool) {
		if int(done.Add(1)) > o.Grants {
			return false, false
		}
		fam := w + o.Concurrency*pos[w]
		if fam >= len(refresh) {
			pos[w], fam = 0, w
		}
		pos[w]++
		status, body := postForm(c, tokenURL, url.Values{"grant_type": {"refresh_token"}, "client_id": {e.client.ID},
			"client_secret": {e.secret}, "refresh_token": {refresh[fam]}})
		var set oauth.TokenSet
		if status != 200 || json.Unmarshal(body, &set) != nil {
			return false, true
		}
		refresh[fam] = set.RefreshToken
		return true, true
	})
	fmt.Fprintf(out, "  %s\n", res.Refresh)
	return res, nil
}
