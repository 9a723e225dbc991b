package synth

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Summary is what a seeding run wrote.
type Summary struct {
	Users       int     `json:"users"`
	Recommended int     `json:"recommendable_users" doc:"discoverable, visible to members: in the search index"`
	Seconds     float64 `json:"seconds"`
	PerSecond   float64 `json:"users_per_second"`
}

// Seed generates n people and writes them in batches, one transaction per
// batch, generating the next batch while the last one is written. each, if
// set, sees every person before it is written (the benchmark keeps samples).
func Seed(ctx context.Context, db *store.DB, g *Generator, n, batch int, passwordHash string,
	progress func(done int), each func(Person)) (Summary, error) {
	start := time.Now()
	batches := make(chan []*users.User, 2)
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sum := Summary{Users: n}
	go func() {
		defer close(batches)
		for done := 0; done < n; {
			size := min(batch, n-done)
			b := make([]*users.User, size)
			for i := range b {
				p := g.Person()
				if each != nil {
					each(p)
				}
				if store.Recommendable(p.User) {
					sum.Recommended++
				}
				b[i] = p.User
			}
			done += size
			select {
			case batches <- b:
			case <-gctx.Done():
				return
			}
		}
	}()
	written := 0
	for b := range batches {
		if err := db.SeedUsers(ctx, b, passwordHash); err != nil {
			return sum, err
		}
		written += len(b)
		if progress != nil {
			progress(written)
		}
	}
	if err := ctx.Err(); err != nil {
		return sum, err
	}
	sum.Seconds = time.Since(start).Seconds()
	sum.PerSecond = float64(n) / sum.Seconds
	return sum, nil
}

// ProgressBar returns a progress callback that redraws one line on w:
// a bar, the count, the rate and the time left.
func ProgressBar(w io.Writer, what string, total int) func(done int) {
	start := time.Now()
	last := time.Time{}
	return func(done int) {
		if time.Since(last) < 200*time.Millisecond && done < total {
			return
		}
		last = time.Now()
		frac := float64(done) / float64(max(total, 1))
		const width = 30
		bar := strings.Repeat("#", int(frac*width)) + strings.Repeat(".", width-int(frac*width))
		el := time.Since(start).Seconds()
		rate := float64(done) / max(el, 1e-9)
		eta := "?"
		if rate > 0 {
			eta = (time.Duration(float64(total-done)/rate) * time.Second).Round(time.Second).String()
		}
		fmt.Fprintf(w, "\r%s [%s] %3.0f%% %d/%d  %.0f/s  ETA %s   ", what, bar, 100*frac, done, total, rate, eta)
		if done >= total {
			fmt.Fprintln(w)
		}
	}
}
