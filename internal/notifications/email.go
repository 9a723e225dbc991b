package notifications

import (
	"bytes"
	"html/template"
	"net/url"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/mail"
	"github.com/matchpoint-api/matchpoint/internal/notify"
)

// kindLabels name each kind in an email's footer ("You get emails about
// <label>").
var kindLabels = map[string]string{
	notify.KindMessage:             "new messages",
	notify.KindMatchRequested:      "match requests",
	notify.KindMatchAccepted:       "accepted match requests",
	notify.KindMatchDeclined:       "declined match requests",
	notify.KindMatchExpired:        "expired match requests",
	notify.KindEventUpdated:        "changes to your events",
	notify.KindEventCancelled:      "cancelled events",
	notify.KindEventPromoted:       "waitlist promotions",
	notify.KindEventReminder:       "event reminders",
	notify.KindWebhookFailing:      "failing webhook endpoints",
	notify.KindVerificationDecided: "ID verification decisions",
	notify.KindModerationDecision:  "moderation decisions",
}

// KindLabel names kind for people.
func KindLabel(kind string) string {
	if l, ok := kindLabels[kind]; ok {
		return l
	}
	return kind + " notifications"
}

var htmlEmail = template.Must(template.New("email").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title></head>
<body style="font-family: system-ui, sans-serif; color: #1a1a1a; max-width: 36rem; margin: 0 auto; padding: 1.5rem">
<h1 style="font-size: 1.25rem">{{.Title}}</h1>
{{if .Body}}<p style="white-space: pre-line">{{.Body}}</p>{{end}}
<hr style="border: none; border-top: 1px solid #ddd; margin: 2rem 0 1rem">
<p style="font-size: .85rem; color: #666">You get this email because email is on for {{.Label}} in your Matchpoint notification settings.
<a href="{{.Unsubscribe}}">Unsubscribe from {{.Label}} emails</a>.</p>
</body></html>
`))

// Email renders the email of a notification: plain text and HTML, with an
// unsubscribe link for its kind and the RFC 8058 one-click headers.
func Email(to string, r *Record, unsubscribe string, now time.Time) mail.Message {
	label := KindLabel(r.Kind)
	var text strings.Builder
	text.WriteString(r.Title + "\n")
	if r.Body != "" {
		text.WriteString("\n" + r.Body + "\n")
	}
	text.WriteString("\n-- \nYou get this email because email is on for " + label + " in your Matchpoint notification settings.\n" +
		"Unsubscribe from " + label + " emails: " + unsubscribe + "\n")
	var html bytes.Buffer
	_ = htmlEmail.Execute(&html, map[string]string{"Title": r.Title, "Body": r.Body, "Label": label, "Unsubscribe": unsubscribe})
	return mail.Message{
		To: to, Subject: strings.Join(strings.Fields(r.Title), " "), Text: text.String(), HTML: html.String(), Date: now,
		Headers: [][2]string{
			{"List-Unsubscribe", "<" + unsubscribe + ">"},
			{"List-Unsubscribe-Post", "List-Unsubscribe=One-Click"},
			{"Auto-Submitted", "auto-generated"}, // RFC 3834: no vacation replies
			{"X-Matchpoint-Notification", r.ID},
		},
	}
}

// UnsubscribeURL is the link of a token, under base.
func UnsubscribeURL(base, token string) string {
	return strings.TrimRight(base, "/") + "/v1/notifications/unsubscribe?token=" + url.QueryEscape(token)
}
