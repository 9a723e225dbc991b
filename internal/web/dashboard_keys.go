package web

import (
	"context"
	"net/http"
	"slices"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/auth"
)

// scopeChoices are the scopes a form offers the person: those their tier
// allows, in the consent page's order.
func scopeChoices(v *viewer) []auth.ScopeInfo {
	var out []auth.ScopeInfo
	for _, s := range auth.AllScopes {
		if slices.Contains(v.Principal.Scopes, s.Name) {
			out = append(out, s)
		}
	}
	return out
}

func (p *Pages) keysData(ctx context.Context, v *viewer) map[string]any {
	keys, err := p.dash.Keys.List(ctx, v.User.ID, "", 100)
	return map[string]any{"Keys": keys, "KeysErr": err, "Scopes": scopeChoices(v)}
}

// Keys is /dashboard/keys: the account's API keys, a form to create one.
func (p *Pages) Keys() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := p.signedIn(w, r)
		if !ok {
			return
		}
		d := p.keysData(r.Context(), v)
		if err, _ := d["KeysErr"].(error); err != nil {
			p.serverError(w, r, err)
			return
		}
		p.page(w, r, v, http.StatusOK, "dash_keys", "API keys", d)
	})
}

// CreateKey creates a key and shows it, this once.
func (p *Pages) CreateKey() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := p.signedIn(w, r)
		if !ok {
			return
		}
		f, ok := p.form(w, r)
		if !ok {
			return
		}
		k, secret, err := p.dash.Keys.Create(r.Context(), apikeys.Spec{UserID: v.User.ID, Name: f.Get("name"), Scopes: f["scopes"], Within: v.Principal.Scopes})
		if err != nil {
			p.fail(w, r, v, err, "dash_keys", "API keys", func(ctx context.Context) map[string]any { return p.keysData(ctx, v) })
			return
		}
		d := p.keysData(r.Context(), v)
		d["NewKey"], d["Secret"] = k, secret
		p.page(w, r, v, http.StatusCreated, "dash_keys", "API keys", d)
	})
}

// RevokeKey revokes one of the account's keys.
func (p *Pages) RevokeKey() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := p.signedIn(w, r)
		if !ok {
			return
		}
		if _, ok := p.form(w, r); !ok {
			return
		}
		if _, err := p.dash.Keys.Revoke(r.Context(), v.User.ID, r.PathValue("id")); err != nil {
			p.fail(w, r, v, err, "dash_keys", "API keys", func(ctx context.Context) map[string]any { return p.keysData(ctx, v) })
			return
		}
		http.Redirect(w, r, "/dashboard/keys?done=revoked", http.StatusSeeOther)
	})
}
