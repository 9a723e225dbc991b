package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/events"
	"github.com/matchpoint-api/matchpoint/internal/ids"
)

// SeedPlace is a place seeded events are scattered around.
type SeedPlace struct {
	Label    string
	Lat, Lon float64
	Timezone string // IANA; "" for UTC
}

// Words of seeded titles and descriptions: enough variety that a text
// search matches a realistic share of events, not all or none.
var (
	seedWhen    = []string{"Sunday morning", "Saturday", "Friday evening", "Lunchtime", "After-work", "Weekend", "Early bird", "Midweek", "Late night", "Holiday"}
	seedFormat  = []string{"doubles", "singles", "pickup game", "training", "league match", "friendly", "tournament", "practice", "meetup", "ladder", "clinic", "social"}
	seedSports  = []string{"tennis", "football", "basketball", "running", "badminton", "volleyball", "table tennis", "squash", "padel", "cycling", "climbing", "swimming", "yoga", "golf", "hiking"}
	seedPhrases = []string{
		"All levels welcome.", "Bring water and good shoes.", "Balls provided.", "Beginners are encouraged to join.",
		"Competitive but friendly.", "We split the court fee.", "Meet at the main entrance.", "Coffee afterwards.",
		"Rain or shine.", "Looking for a fourth player.", "Warm-up starts ten minutes before.", "Equipment can be borrowed.",
		"Advanced drills and match play.", "Relaxed pace, lots of laughs.", "Changing rooms on site.", "Free parking nearby.",
		"Coach-led session.", "Mixed teams.", "Bring a light and a dark shirt.", "Snacks after the game.",
	}
)

// SeedEvents inserts n public events quickly, in batches, for demonstration
// databases (matchpoint seed) and benchmarks: titles and descriptions from
// a small vocabulary, sports of the catalogue, starts over the next 60 days
// from now, within about 15 km of one of places, by one of creators. They
// record no outbox events: nothing happened that a subscriber should hear
// of. The full-text index's segments are merged at the end, as the janitor
// does. It answers the ids, in insertion order.
func SeedEvents(ctx context.Context, db *DB, n int, rng *rand.Rand, creators []string, places []SeedPlace, now time.Time) ([]string, error) {
	if len(creators) == 0 || len(places) == 0 {
		return nil, fmt.Errorf("store: seed events: need creators and places")
	}
	cols := []string{"id", "creator_id", "title", "description", "sport", "location", "latitude", "longitude", "place_cells",
		"starts_at", "ends_at", "timezone", "max_participants", "skill_min", "skill_max", "visibility", "status",
		"created_at", "updated_at"}
	// Statements of 25 rows (the SQLite driver binds $N parameters by name,
	// which costs in proportion to their number, so fewer per statement is
	// quicker), prepared once, 2000 rows to a transaction.
	const rowsPer, perTx = 25, 2000
	insert := func(rows int) string {
		vals := make([]string, rows)
		for i := range vals {
			vals[i] = "(" + placeholders(i*len(cols)+1, len(cols)) + ")"
		}
		return `INSERT INTO events (` + strings.Join(cols, ", ") + `) VALUES ` + strings.Join(vals, ", ")
	}
	out := make([]string, 0, n)
	for done := 0; done < n; done += perTx {
		err := db.Tx(ctx, func(tx *sql.Tx) error {
			full, err := tx.PrepareContext(ctx, insert(rowsPer))
			if err != nil {
				return err
			}
			defer full.Close()
			for part := done; part < min(n, done+perTx); part += rowsPer {
				size := min(rowsPer, n-part)
				args := make([]any, 0, size*len(cols))
				for range size {
					id, vals := seedEvent(rng, creators, places, now)
					out = append(out, id)
					args = append(args, vals...)
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
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("store: seed events: %w", err)
		}
	}
	if db.Dialect == SQLite {
		if err := db.mergeTextIndex(ctx, "events_fts", 1); err != nil {
			return nil, fmt.Errorf("store: seed events: %w", err)
		}
	}
	return out, nil
}

// seedEvent makes one event's column values, in SeedEvents' column order.
func seedEvent(rng *rand.Rand, creators []string, places []SeedPlace, now time.Time) (string, []any) {
	p := places[rng.IntN(len(places))]
	sport := seedSports[rng.IntN(len(seedSports))]
	title := seedWhen[rng.IntN(len(seedWhen))] + " " + sport + " " + seedFormat[rng.IntN(len(seedFormat))]
	var desc []string
	for range 2 + rng.IntN(3) {
		desc = append(desc, seedPhrases[rng.IntN(len(seedPhrases))])
	}
	// Scatter within ~15 km: uniform over a disc.
	r, th := 15*math.Sqrt(rng.Float64()), 2*math.Pi*rng.Float64()
	lat := p.Lat + r*math.Cos(th)/kmPerDegree
	lon := p.Lon + r*math.Sin(th)/(kmPerDegree*math.Cos(p.Lat*math.Pi/180))
	start := now.Add(time.Duration(1+rng.IntN(60*24)) * time.Hour).Truncate(time.Hour)
	tz := p.Timezone
	if tz == "" {
		tz = "UTC"
	}
	smin, smax := sql.NullInt64{}, sql.NullInt64{}
	if rng.IntN(3) == 0 {
		lo := rng.IntN(3)
		smin, smax = sql.NullInt64{Int64: int64(lo), Valid: true}, sql.NullInt64{Int64: int64(lo + 1), Valid: true}
	}
	id := ids.New(ids.SportsEvent)
	return id, []any{id, creators[rng.IntN(len(creators))], title, strings.Join(desc, " "), sport, p.Label,
		lat, lon, placeCells(&lat, &lon), micros(start), micros(start.Add(2 * time.Hour)), tz, 2 + rng.IntN(20), smin, smax,
		events.Public, events.Scheduled, micros(now), micros(now)}
}

// SeedWords are words seeded events use, for benchmarks' text queries.
func SeedWords() []string {
	var out []string
	for _, list := range [][]string{seedWhen, seedFormat, seedPhrases} {
		for _, s := range list {
			for _, w := range strings.Fields(strings.Trim(s, ".")) {
				w = strings.ToLower(strings.Trim(w, ".,"))
				if len(w) > 3 && w != "with" && w != "after" {
					out = append(out, w)
				}
			}
		}
	}
	return out
}
