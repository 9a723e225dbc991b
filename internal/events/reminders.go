package events

import (
	"context"
	"log/slog"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/notify"
)

// Reminders: going attendees hear of an event 24 hours and 1 hour before it
// starts. Each event records how far its reminders got (ReminderStage) and
// the worker advances it under the event's row lock, so when several nodes
// run the worker each reminder is sent once: the node that comes second
// finds the stage already advanced and sends nothing.

// reminderBefore is how long before the start each stage is due.
var reminderBefore = [...]time.Duration{1: 24 * time.Hour, 2: time.Hour}

// dueStage is the reminder stage an event should have reached at now (0:
// none due, or it has started).
func dueStage(e *Event, now time.Time) int {
	if e.Status != Scheduled || !now.Before(e.Start) {
		return 0
	}
	for stage := len(reminderBefore) - 1; stage >= 1; stage-- {
		if !now.Before(e.Start.Add(-reminderBefore[stage])) {
			return stage
		}
	}
	return 0
}

// SendReminders sends every reminder due now and answers how many
// notifications it wrote. A reminder goes to those going since before it
// was due: someone who answers going an hour before gets the one-hour
// reminder, not a belated 24-hour one.
func (s *Service) SendReminders(ctx context.Context) (int, error) {
	now := s.clock.Now()
	sent := 0
	for {
		due, err := s.store.DueReminders(ctx, now, 100)
		if err != nil || len(due) == 0 {
			return sent, err
		}
		advanced := 0
		for _, id := range due {
			err := s.store.WithEvent(ctx, id, func(l Locked) error {
				e := l.Event()
				stage := dueStage(e, now)
				if stage <= e.ReminderStage {
					return nil // another node sent it
				}
				e.ReminderStage = stage
				if err := l.SaveEvent(ctx); err != nil {
					return err
				}
				advanced++
				cutoff := e.Start.Add(-reminderBefore[stage])
				going, err := l.RSVPs(ctx, Going)
				if err != nil {
					return err
				}
				title := "Tomorrow: " + eventTitle(e)
				if stage == 2 {
					title = "In an hour: " + eventTitle(e)
				}
				for _, r := range going {
					if r.GoingSince == nil || r.GoingSince.After(cutoff) {
						continue
					}
					n := notify.New(now, r.UserID, notify.KindEventReminder, title, whenText(e)+" at "+placeText(e)+".",
						map[string]string{"event_id": e.ID})
					if err := l.Notify(ctx, n); err != nil {
						return err
					}
					sent++
				}
				return nil
			})
			if err != nil {
				return sent, err
			}
		}
		if advanced == 0 {
			return sent, nil // what is left is another node's work in progress
		}
	}
}

// RunReminders sends due reminders every interval until ctx ends.
func (s *Service) RunReminders(ctx context.Context, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := s.SendReminders(ctx)
		if err != nil && ctx.Err() == nil {
			log.Warn("event reminders", "error", err.Error())
		} else if n > 0 {
			log.Info("sent event reminders", "notifications", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
