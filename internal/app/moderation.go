package app

import (
	"context"
	"errors"
	"log/slog"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/matching"
	"github.com/matchpoint-api/matchpoint/internal/moderation"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// assembleModeration builds the safety service and lends it what the other
// domains own: reading a target as a viewer sees it, taking content down,
// blocking, and releasing a suspended user's requests and places.
func assembleModeration(a *App, cfg config.Config, clk clock.Clock, log *slog.Logger) {
	c := cfg.Moderation
	m := moderation.NewService(store.NewModeration(a.DB), clk, moderation.Settings{
		SignalInterval: c.SignalInterval, SignalWindow: c.SignalWindow, NewAccountAge: c.NewAccountAge, ReportsAgainst: c.ReportsAgainst,
		BlocksAgainst: c.BlocksAgainst, NewAccountLinks: c.NewAccountLinks, Fanout: c.Fanout, SameText: c.SameText, CaseRisk: c.CaseRisk,
	}, log)
	m.SetTarget(moderation.TargetUser, moderation.Target{
		Read: func(ctx context.Context, viewerID, id string) (*moderation.Content, error) {
			u, err := a.Users.View(ctx, viewerID, id)
			if err != nil {
				return nil, err
			}
			return &moderation.Content{Type: moderation.TargetUser, ID: u.ID, AuthorID: u.ID, Texts: map[string]string{
				"username": u.Username, "first_name": u.FirstName, "last_name": u.LastName, "bio": u.Bio}}, nil
		},
		// A profile's removable content is its free text, the bio; names
		// stay (the account is suspended if they are the problem).
		Remove: func(ctx context.Context, c *moderation.Content, _ string) error {
			empty := ""
			_, err := a.Users.Update(ctx, c.ID, users.Patch{Bio: &empty})
			return err
		},
	})
	m.SetTarget(moderation.TargetEvent, moderation.Target{
		Read: func(ctx context.Context, viewerID, id string) (*moderation.Content, error) {
			e, err := a.Events.Get(ctx, viewerID, id)
			if err != nil {
				return nil, err
			}
			return &moderation.Content{Type: moderation.TargetEvent, ID: e.ID, AuthorID: e.CreatorID, Texts: map[string]string{
				"title": e.Title, "description": e.Description}}, nil
		},
		// An event comes down by being cancelled: its attendees are told.
		Remove: func(ctx context.Context, c *moderation.Content, reason string) error {
			_, err := a.Events.Cancel(ctx, c.AuthorID, c.ID, "Removed by moderation: "+reason)
			return err
		},
	})
	m.SetTarget(moderation.TargetMessage, moderation.Target{
		// A member of the conversation reads a message; anyone else gets 404.
		Read: func(ctx context.Context, viewerID, id string) (*moderation.Content, error) {
			msg, err := a.Messaging.Message(ctx, id, viewerID)
			if err != nil {
				return nil, err
			}
			if msg.Deleted() {
				return nil, apperr.NotFoundf("no message %q", id)
			}
			return &moderation.Content{Type: moderation.TargetMessage, ID: msg.ID, AuthorID: msg.SenderID,
				Texts: map[string]string{"body": msg.Body, "conversation_id": msg.ConversationID}}, nil
		},
		// A message comes down as a tombstone, as if its sender deleted it.
		// A held one was never delivered: there is nothing to take down.
		Remove: func(ctx context.Context, c *moderation.Content, _ string) error {
			return a.Messaging.Delete(ctx, c.ID, c.AuthorID)
		},
		// A held message goes out now, from its sender; a held edit is applied.
		Release: func(ctx context.Context, c *moderation.Content) error {
			if id := c.Texts["message_id"]; id != "" {
				if _, err := a.Messaging.Edit(ctx, id, c.AuthorID, c.Texts["body"]); err != nil {
					return err
				}
				return m.MarkMessage(ctx, id, nil) // a person found it fine
			}
			if c.Texts["conversation_id"] == "" || c.Texts["body"] == "" {
				return nil // erased with its author
			}
			_, err := a.Messaging.Send(ctx, c.Texts["conversation_id"], c.AuthorID, c.Texts["body"], c.Texts["reply_to"])
			return err
		},
	})
	m.SetBlocker(func(ctx context.Context, blocker, blocked string) error {
		_, err := a.Matching.Block(ctx, blocker, blocked)
		return err
	})
	m.SetReleaser(func(ctx context.Context, userID string) error { return releaseSuspended(ctx, a, userID) })
	a.Moderation = m
}

// releaseSuspended gives up a suspended user's pending match requests (sent
// ones cancelled, received ones declined) and their places at upcoming
// events (which promotes the waitlist).
func releaseSuspended(ctx context.Context, a *App, userID string) error {
	var errs []error
	for {
		ms, err := a.Matching.List(ctx, userID, matching.ListFilter{Status: matching.StatusPending, Limit: 100})
		if err != nil {
			return err
		}
		done := 0
		for _, m := range ms {
			if m.User1ID == userID {
				_, err = a.Matching.Cancel(ctx, userID, m.ID)
			} else {
				_, err = a.Matching.Decline(ctx, userID, m.ID)
			}
			if err != nil && !apperr.IsKind(err, apperr.Conflict) {
				errs = append(errs, err)
				continue
			}
			done++
		}
		if len(ms) < 100 || done == 0 {
			break
		}
	}
	cursor := ""
	for {
		mine, next, err := a.Events.MyEvents(ctx, userID, true, "attendee", cursor, 100)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		for _, me := range mine {
			if me.Status == "" {
				continue
			}
			if err := a.Events.Withdraw(ctx, userID, me.Event.ID); err != nil && !apperr.IsKind(err, apperr.NotFound) && !apperr.IsKind(err, apperr.Conflict) {
				errs = append(errs, err)
			}
		}
		if next == "" {
			break
		}
		cursor = next
	}
	return errors.Join(errs...)
}

// RunModerationSignals recomputes the behaviour signals until ctx ends.
func (a *App) RunModerationSignals(ctx context.Context, log *slog.Logger) {
	a.Moderation.RunSignals(ctx, log)
}
