package web

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/webhooks"
)

// logPage is how many deliveries the log shows at once.
const logPage = 25

func (p *Pages) webhooksData(ctx context.Context, v *viewer) map[string]any {
	subs, err := p.dash.Webhooks.List(ctx, v.Principal, "", 100)
	keys, kerr := p.dash.Keys.List(ctx, v.User.ID, "", 100)
	if err == nil {
		err = kerr
	}
	live := slices.DeleteFunc(keys, func(k *apikeys.Key) bool { return k.RevokedAt != nil })
	return map[string]any{"Subs": subs, "SubsErr": err, "Keys": live, "Kinds": outbox.Kinds}
}

// Webhooks is /dashboard/webhooks: the account's endpoints, a form to add one.
func (p *Pages) Webhooks() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := p.signedIn(w, r)
		if !ok {
			return
		}
		d := p.webhooksData(r.Context(), v)
		if err, _ := d["SubsErr"].(error); err != nil {
			p.serverError(w, r, err)
			return
		}
		p.page(w, r, v, http.StatusOK, "dash_webhooks", "Webhooks", d)
	})
}

// CreateWebhook subscribes an endpoint. A subscription receives what its
// credential could read through the API, so the form names one of the
// account's API keys, whose scopes it gets.
func (p *Pages) CreateWebhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := p.signedIn(w, r)
		if !ok {
			return
		}
		f, ok := p.form(w, r)
		if !ok {
			return
		}
		failed := func(err error) {
			p.fail(w, r, v, err, "dash_webhooks", "Webhooks", func(ctx context.Context) map[string]any { return p.webhooksData(ctx, v) })
		}
		k, err := p.dash.Keys.Get(r.Context(), v.User.ID, f.Get("api_key"))
		if err == nil && k.RevokedAt != nil {
			err = apperr.NotFoundf("no API key %q", k.ID)
		}
		if err != nil {
			failed(apperr.InvalidParam("api_key", "invalid_api_key", "choose one of your API keys"))
			return
		}
		var kinds []string
		for _, e := range f["events"] {
			kinds = append(kinds, strings.Fields(e)...)
		}
		cred := &auth.Principal{UserID: v.User.ID, Role: v.User.Role, APIKeyID: k.ID, Scopes: k.Scopes, AccountID: v.User.ID,
			Tier: v.User.Tier, HourlyLimit: v.User.HourlyLimit()}
		sub, secret, err := p.dash.Webhooks.Create(r.Context(), cred, webhooks.Spec{URL: f.Get("url"), Events: kinds, Description: f.Get("description")})
		if err != nil {
			failed(err)
			return
		}
		p.showWebhook(w, r, v, http.StatusCreated, sub.ID, map[string]any{"Secret": secret})
	})
}

// logFilter reads the delivery log's filters from the query.
func logFilter(q url.Values, now time.Time) (webhooks.DeliveryFilter, string) {
	var f webhooks.DeliveryFilter
	if s := q.Get("status"); s == webhooks.DeliveryPending || s == webhooks.DeliverySucceeded || s == webhooks.DeliveryFailed {
		f.Status = s
	}
	if t := q.Get("event_type"); slices.Contains(outbox.Kinds, t) || t == webhooks.KindFailing {
		f.EventType = t
	}
	windows := map[string]time.Duration{"1h": time.Hour, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour}
	since := q.Get("since")
	if d, ok := windows[since]; ok {
		t := now.Add(-d)
		f.Since = &t
	} else {
		since = ""
	}
	return f, since
}

// showWebhook renders an endpoint's page: settings, actions, statistics
// and charts, and a page of its delivery log.
func (p *Pages) showWebhook(w http.ResponseWriter, r *http.Request, v *viewer, status int, id string, extra map[string]any) {
	ctx := r.Context()
	sub, err := p.dash.Webhooks.Get(ctx, v.Principal, id)
	if err != nil {
		p.fail(w, r, v, err, "dash_webhooks", "Webhooks", func(ctx context.Context) map[string]any { return p.webhooksData(ctx, v) })
		return
	}
	q := r.URL.Query()
	filter, since := logFilter(q, p.now())
	before := q.Get("before")
	if !strings.HasPrefix(before, "dlv_") || len(before) != 30 {
		before = ""
	}
	ds, err := p.dash.Webhooks.Deliveries(ctx, v.Principal, id, filter, before, logPage+1)
	if err != nil {
		p.serverError(w, r, err)
		return
	}
	next := ""
	if len(ds) > logPage {
		ds = ds[:logPage]
		nq := url.Values{"before": {ds[len(ds)-1].ID}}
		for _, k := range []string{"status", "event_type", "since"} {
			if q.Get(k) != "" {
				nq.Set(k, q.Get(k))
			}
		}
		next = "/dashboard/webhooks/" + id + "?" + nq.Encode()
	}
	hour, day, err := p.dash.Webhooks.Stats(ctx, v.Principal, id)
	if err != nil {
		p.serverError(w, r, err)
		return
	}
	to := p.now().Truncate(time.Hour).Add(time.Hour)
	hours, err := p.dash.Analytics.WebhookHours(ctx, id, to.Add(-24*time.Hour), to)
	if err != nil {
		p.serverError(w, r, err)
		return
	}
	labels := make([]string, len(hours))
	rate := make([]float64, len(hours))
	lat := map[string][]float64{}
	for i, h := range hours {
		labels[i] = h.Start.Format("15:04")
		rate[i] = math.NaN()
		if h.SuccessRate != nil {
			rate[i] = *h.SuccessRate * 100
		}
		lat["p50"], lat["p95"], lat["p99"] = append(lat["p50"], h.P50), append(lat["p95"], h.P95), append(lat["p99"], h.P99)
	}
	st, reason := sub.EffectiveStatus()
	d := map[string]any{"Sub": sub, "Status": st, "Reason": reason, "Deliveries": ds, "Next": next,
		"Hour": hour, "Day": day, "Kinds": outbox.Kinds, "Filter": filter, "Since": since,
		"RateChart":    lineChart("Success rate per hour, last 24 hours", "%", labels, map[string][]float64{"success": rate}, []string{"success"}),
		"LatencyChart": lineChart("Attempt latency per hour, last 24 hours", "ms", labels, lat, []string{"p50", "p95", "p99"}),
	}
	for k, val := range extra {
		d[k] = val
	}
	p.page(w, r, v, status, "dash_webhook", "Webhook "+sub.ID, d)
}

// Webhook is /dashboard/webhooks/{id}.
func (p *Pages) Webhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := p.signedIn(w, r)
		if !ok {
			return
		}
		p.showWebhook(w, r, v, http.StatusOK, r.PathValue("id"), nil)
	})
}

// WebhookAction is a button of an endpoint's page: verify, pause, resume,
// delete, rotate (the new secret shown once), test (the receiver's answer
// shown), retry-failed.
func (p *Pages) WebhookAction() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := p.signedIn(w, r)
		if !ok {
			return
		}
		f, ok := p.form(w, r)
		if !ok {
			return
		}
		ctx, id := r.Context(), r.PathValue("id")
		back := "/dashboard/webhooks/" + id
		var err error
		switch r.PathValue("action") {
		case "verify":
			if _, err = p.dash.Webhooks.Verify(ctx, v.Principal, id); err == nil {
				http.Redirect(w, r, back+"?done=verifying", http.StatusSeeOther)
				return
			}
		case "pause":
			if _, err = p.dash.Webhooks.Pause(ctx, v.Principal, id); err == nil {
				http.Redirect(w, r, back+"?done=paused", http.StatusSeeOther)
				return
			}
		case "resume":
			if _, err = p.dash.Webhooks.Resume(ctx, v.Principal, id); err == nil {
				http.Redirect(w, r, back+"?done=resumed", http.StatusSeeOther)
				return
			}
		case "delete":
			if err = p.dash.Webhooks.Delete(ctx, v.Principal, id); err == nil {
				http.Redirect(w, r, "/dashboard/webhooks?done=deleted", http.StatusSeeOther)
				return
			}
		case "rotate":
			var secret string
			if _, secret, err = p.dash.Webhooks.Rotate(ctx, v.Principal, id); err == nil {
				p.showWebhook(w, r, v, http.StatusOK, id, map[string]any{"Secret": secret, "Rotated": true})
				return
			}
		case "test":
			var d *webhooks.Delivery
			if d, err = p.dash.Webhooks.Test(ctx, v.Principal, id, f.Get("event_type")); err == nil {
				p.showWebhook(w, r, v, http.StatusOK, id, map[string]any{"Tested": d})
				return
			}
		case "retry-failed":
			if _, err = p.dash.Webhooks.RetryFailed(ctx, v.Principal, id, p.now().Add(-24*time.Hour)); err == nil {
				http.Redirect(w, r, back+"?done=retried-all", http.StatusSeeOther)
				return
			}
		default:
			err = apperr.NotFoundf("no such action")
		}
		if status, msg, ok := problem(err); ok && status != http.StatusNotFound {
			p.showWebhook(w, r, v, status, id, map[string]any{"Error": msg})
			return
		}
		p.fail(w, r, v, err, "dash_webhooks", "Webhooks", func(ctx context.Context) map[string]any { return p.webhooksData(ctx, v) })
	})
}

// RetryDelivery sends one delivery again.
func (p *Pages) RetryDelivery() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := p.signedIn(w, r)
		if !ok {
			return
		}
		if _, ok := p.form(w, r); !ok {
			return
		}
		id := r.PathValue("id")
		if _, err := p.dash.Webhooks.Retry(r.Context(), v.Principal, id, r.PathValue("delivery")); err != nil {
			if status, msg, ok := problem(err); ok && status != http.StatusNotFound {
				p.showWebhook(w, r, v, status, id, map[string]any{"Error": msg})
				return
			}
			p.fail(w, r, v, err, "dash_webhooks", "Webhooks", func(ctx context.Context) map[string]any { return p.webhooksData(ctx, v) })
			return
		}
		http.Redirect(w, r, "/dashboard/webhooks/"+id+"?done=retried", http.StatusSeeOther)
	})
}
