package config

import (
	"errors"
	"flag"
	"net/url"
)

// registerNotifications adds the settings of outbound calls, push and email.
func registerNotifications(fs *flag.FlagSet, env func(name, def string) string, c *Config) {
	allow := env("MATCHPOINT_WEBHOOK_ALLOW_PRIVATE", "false")
	c.WebhookAllowPrivate, c.badAllowPrivate = allow == "true" || allow == "1", allow != "true" && allow != "1" && allow != "false" && allow != "0"
	fs.BoolVar(&c.WebhookAllowPrivate, "webhook-allow-private", c.WebhookAllowPrivate,
		"let webhook and Web Push calls reach loopback and private addresses, for development and tests (MATCHPOINT_WEBHOOK_ALLOW_PRIVATE)")
	fs.StringVar(&c.WebhookCAFile, "webhook-ca-file", env("MATCHPOINT_WEBHOOK_CA_FILE", ""), "PEM certificates trusted for outbound calls besides the system's (MATCHPOINT_WEBHOOK_CA_FILE)")
	fs.StringVar(&c.SMTPURL, "smtp-url", env("MATCHPOINT_SMTP_URL", ""), "smtp://user:password@host:587?from=address or smtps://... for email; empty: no email (MATCHPOINT_SMTP_URL)")
	fs.StringVar(&c.VAPIDSubject, "vapid-subject", env("MATCHPOINT_VAPID_SUBJECT", ""), "mailto: or https: contact sent to Web Push services; default the base URL if https, else mailto:postmaster@<its host> (MATCHPOINT_VAPID_SUBJECT)")
	fs.StringVar(&c.APNsKeyFile, "apns-key-file", env("MATCHPOINT_APNS_KEY_FILE", ""), "APNs .p8 key; APNs is off without it (MATCHPOINT_APNS_KEY_FILE)")
	fs.StringVar(&c.APNsKeyID, "apns-key-id", env("MATCHPOINT_APNS_KEY_ID", ""), "the .p8 key's id (MATCHPOINT_APNS_KEY_ID)")
	fs.StringVar(&c.APNsTeamID, "apns-team-id", env("MATCHPOINT_APNS_TEAM_ID", ""), "Apple developer team id (MATCHPOINT_APNS_TEAM_ID)")
	fs.StringVar(&c.APNsTopic, "apns-topic", env("MATCHPOINT_APNS_TOPIC", ""), "the iOS app's bundle id (MATCHPOINT_APNS_TOPIC)")
	fs.StringVar(&c.APNsURL, "apns-url", env("MATCHPOINT_APNS_URL", ""), "APNs address; default https://api.push.apple.com (MATCHPOINT_APNS_URL)")
	fs.StringVar(&c.FCMCredentialsFile, "fcm-credentials-file", env("MATCHPOINT_FCM_CREDENTIALS_FILE", ""), "Firebase service account key (JSON); FCM is off without it (MATCHPOINT_FCM_CREDENTIALS_FILE)")
	fs.StringVar(&c.FCMURL, "fcm-url", env("MATCHPOINT_FCM_URL", ""), "FCM send address; default from the key's project (MATCHPOINT_FCM_URL)")
}

// validateNotifications checks the settings of push and email.
func (c *Config) validateNotifications() error {
	if c.badAllowPrivate {
		return errors.New("config: MATCHPOINT_WEBHOOK_ALLOW_PRIVATE must be true or false")
	}
	if c.VAPIDSubject != "" {
		u, err := url.Parse(c.VAPIDSubject)
		if err != nil || (u.Scheme != "mailto" && u.Scheme != "https") {
			return errors.New("config: MATCHPOINT_VAPID_SUBJECT must be a mailto: or https: URI")
		}
	}
	apns := []string{c.APNsKeyFile, c.APNsKeyID, c.APNsTeamID, c.APNsTopic}
	set := 0
	for _, v := range apns {
		if v != "" {
			set++
		}
	}
	if set > 0 && set < len(apns) {
		return errors.New("config: APNs needs MATCHPOINT_APNS_KEY_FILE, MATCHPOINT_APNS_KEY_ID, MATCHPOINT_APNS_TEAM_ID and MATCHPOINT_APNS_TOPIC together")
	}
	if c.SMTPURL != "" {
		if u, err := url.Parse(c.SMTPURL); err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" {
			return errors.New("config: MATCHPOINT_SMTP_URL must look like smtp://user:password@host:587?from=noreply@example.com or smtps://...")
		}
	}
	return nil
}
