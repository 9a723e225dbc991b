package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
)

// SeedConversation is a group conversation SeedMessaging creates.
type SeedConversation struct {
	ID      string
	Members []string // the first is its admin
}

// seedChat is the vocabulary of seeded messages; words are drawn with a
// Zipf distribution, so a few are everywhere and most are rare, as in chat.
var seedChat = strings.Fields(`the you at see we are on for and to is it court ok yes no tomorrow tonight game match play
	tennis padel squash badminton running cycling football basketball volleyball climbing swimming golf hockey rugby
	doubles singles serve volley rally score set tiebreak warmup stretch training session coach lesson practice drills
	park club gym pool track field pitch hall centre indoor outdoor covered lights booked booking reserve cancel
	morning afternoon evening weekend monday tuesday wednesday thursday friday saturday sunday early late noon
	rain sun wind cold hot weather forecast shoes racket balls net water bottle towel bag locker parking bus train
	bike walk meet entrance gate cafe after before later soon now running late minutes hour half quarter
	great thanks cheers sorry welcome nice awesome fun tired sore ready keen maybe sure perfect brilliant amazing
	beginner intermediate advanced expert level partner team opponent league tournament ladder ranking final semi
	bring borrow spare extra new old grip strings shuttle cones bibs whistle referee umpire rules points
	injury knee ankle shoulder back recovery rest physio ice stretching yoga pilates core cardio sprint interval
	tempo pace distance kilometres laps route hills trail marathon parkrun relay`)

// SeedMessaging creates group conversations and n messages spread over
// them at random, numbered in order in each, their bodies drawn from
// seedChat. Bulk inserts for benchmarks; the full-text index follows
// through its triggers (SQLite) or generated column (PostgreSQL).
func SeedMessaging(ctx context.Context, db *DB, convs []SeedConversation, n int, rng *rand.Rand, now time.Time) error {
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		for _, c := range convs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO conversations (id, kind, title, creator_id, last_seq, activity_at, created_at, updated_at)
				VALUES ($1, 'group', $2, $3, 0, $4, $4, $4)`, c.ID, "Seeded "+c.ID[len(c.ID)-6:], c.Members[0], micros(now)); err != nil {
				return err
			}
			for i, u := range c.Members {
				role := messaging.Member
				if i == 0 {
					role = messaging.Admin
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO conversation_members (conversation_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4)`,
					c.ID, u, role, micros(now)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: seed conversations: %w", err)
	}
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(seedChat)-1))
	cols := []string{"id", "conversation_id", "conv_seq", "sender_id", "body", "created_at"}
	const rowsPer, perTx = 25, 5000
	insert := func(rows int) string {
		vals := make([]string, rows)
		for i := range vals {
			vals[i] = "(" + placeholders(i*len(cols)+1, len(cols)) + ")"
		}
		return `INSERT INTO messages (` + strings.Join(cols, ", ") + `) VALUES ` + strings.Join(vals, ", ")
	}
	seq := make([]int64, len(convs))
	start := now.Add(-time.Duration(n) * time.Second)
	for done := 0; done < n; done += perTx {
		err := db.Tx(ctx, func(tx *sql.Tx) error {
			var last int64 // SQLite: the messages before these, whose terms are indexed
			if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM messages`).Scan(&last); err != nil {
				return err
			}
			full, err := tx.PrepareContext(ctx, insert(rowsPer))
			if err != nil {
				return err
			}
			defer full.Close()
			for part := done; part < min(n, done+perTx); part += rowsPer {
				size := min(rowsPer, n-part)
				args := make([]any, 0, size*len(cols))
				for i := range size {
					ci := rng.IntN(len(convs))
					c := convs[ci]
					seq[ci]++
					words := make([]string, 4+rng.IntN(14))
					for w := range words {
						words[w] = seedChat[zipf.Uint64()]
					}
					args = append(args, ids.New(ids.Message), c.ID, seq[ci], c.Members[rng.IntN(len(c.Members))],
						strings.Join(words, " "), micros(start.Add(time.Duration(part+i)*time.Second)))
				}
				if size == rowsPer {
					_, err = full.ExecContext(ctx, args...)
				} else {
					_, err = tx.ExecContext(ctx, insert(size), args...)
				}
				if err != nil {
					return err
				}
			}
			if db.Dialect == SQLite { // as a send does (pending.go), all at once
				_, err = tx.ExecContext(ctx, `INSERT INTO message_terms (rowid, terms)
					SELECT seq, matchpoint_message_terms(conversation_id, body) FROM messages WHERE seq > $1 AND body <> ''`, last)
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("store: seed messages: %w", err)
		}
	}
	return db.Tx(ctx, func(tx *sql.Tx) error {
		for i, c := range convs {
			if _, err := tx.ExecContext(ctx, `UPDATE conversations SET last_seq = $2 WHERE id = $1`, c.ID, seq[i]); err != nil {
				return fmt.Errorf("store: seed messages: %w", err)
			}
		}
		return nil
	})
}

// SeedChatWords are the words of seeded messages, most frequent first, for
// benchmarks' queries.
func SeedChatWords() []string { return seedChat }
