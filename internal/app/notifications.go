package app

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/egress"
	"github.com/matchpoint-api/matchpoint/internal/mail"
	"github.com/matchpoint-api/matchpoint/internal/notifications"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push/apns"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push/fcm"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push/webpush"
	"github.com/matchpoint-api/matchpoint/internal/store"
)

// assembleNotifications builds the notification centre and the push and
// email worker. Web Push is always on (its VAPID key is made once and kept
// as an instance key); APNs, FCM and email are on when configured.
func assembleNotifications(ctx context.Context, a *App, cfg config.Config, clk clock.Clock, log *slog.Logger) error {
	now := clk.Now().UnixMicro()
	vapid, err := a.DB.InstanceKey(ctx, "vapid", func() string {
		k, err := webpush.GenerateVAPIDKey()
		if err != nil {
			panic(err)
		}
		return k
	}, now)
	if err != nil {
		return err
	}
	vapidKey, err := webpush.ParseVAPIDKey(vapid)
	if err != nil {
		return fmt.Errorf("app: stored VAPID key: %w", err)
	}
	unsub, err := a.DB.InstanceKey(ctx, "notifications-unsubscribe", randomKey, now)
	if err != nil {
		return err
	}
	unsubKey, err := base64.StdEncoding.DecodeString(unsub)
	if err != nil {
		return fmt.Errorf("app: stored unsubscribe key: %w", err)
	}
	roots, err := egress.RootCAs(cfg.WebhookCAFile)
	if err != nil {
		return err
	}
	policy := egress.Policy{AllowPrivate: cfg.WebhookAllowPrivate}
	client, err := egress.NewClient(egress.Options{Policy: policy, CAFile: cfg.WebhookCAFile, Timeout: 15 * time.Second})
	if err != nil {
		return err
	}
	subject := cfg.VAPIDSubject
	if subject == "" {
		subject = defaultVAPIDSubject(cfg.BaseURL)
	}
	wp, err := webpush.New(webpush.Config{Key: vapidKey, Subject: subject, Client: client, Clock: clk})
	if err != nil {
		return err
	}
	providers := []push.Provider{wp}
	if cfg.APNsKeyFile != "" {
		key, err := os.ReadFile(cfg.APNsKeyFile)
		if err != nil {
			return fmt.Errorf("app: APNs key: %w", err)
		}
		p, err := apns.New(apns.Config{Key: key, KeyID: cfg.APNsKeyID, TeamID: cfg.APNsTeamID, Topic: cfg.APNsTopic, URL: cfg.APNsURL,
			RootCAs: roots, Clock: clk})
		if err != nil {
			return err
		}
		providers = append(providers, p)
	}
	if cfg.FCMCredentialsFile != "" {
		creds, err := os.ReadFile(cfg.FCMCredentialsFile)
		if err != nil {
			return fmt.Errorf("app: FCM credentials: %w", err)
		}
		p, err := fcm.New(fcm.Config{Credentials: creds, URL: cfg.FCMURL, RootCAs: roots, Clock: clk})
		if err != nil {
			return err
		}
		providers = append(providers, p)
	}
	var mailer notifications.Mailer
	if cfg.SMTPURL != "" {
		m, err := mail.Parse(cfg.SMTPURL, mail.Options{RootCAs: roots})
		if err != nil {
			return err
		}
		a.Mail, mailer = m, m
	}
	platforms := make([]string, 0, len(providers))
	for _, p := range providers {
		platforms = append(platforms, p.Platform())
	}
	st := store.NewNotifications(a.DB)
	a.NotificationStore = st
	a.Notifications = notifications.NewService(notifications.Config{Store: st, Clock: clk, BaseURL: cfg.BaseURL,
		UnsubscribeKey: unsubKey, VAPIDPublicKey: wp.PublicKey(), Platforms: platforms, Egress: policy})
	a.NotificationWorker = notifications.NewWorker(notifications.WorkerConfig{Store: st, Providers: providers, Mailer: mailer,
		UnsubscribeURL: a.Notifications.UnsubscribeURL, Clock: clk, Logger: log.With("worker", "notifications")})
	return nil
}

// defaultVAPIDSubject is the contact push services get when none is set:
// the service's address when it is https, else its host's postmaster.
func defaultVAPIDSubject(base string) string {
	u, err := url.Parse(base)
	if err == nil && u.Scheme == "https" {
		return u.Scheme + "://" + u.Host
	}
	host := "localhost"
	if err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	if net.ParseIP(host) != nil {
		host = "localhost"
	}
	return "mailto:postmaster@" + host
}

// RunNotifications sends queued pushes and emails until ctx ends, then
// hands its leases back.
func (a *App) RunNotifications(ctx context.Context) { a.NotificationWorker.Run(ctx) }
