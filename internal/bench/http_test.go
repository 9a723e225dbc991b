package bench

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

// TestHTTPMix: a short run of bench http over real nodes answers every
// operation of the mix without an error, and delivers each write's webhooks;
// on PostgreSQL over one node, then two.
func TestHTTPMix(t *testing.T) {
	if testing.Short() {
		t.Skip("starts service processes")
	}
	o := HTTPOptions{Options: Options{Concurrency: 2, Duration: 3 * time.Second, Binary: apptest.Binary(t)},
		Users: 400, Events: 100, Hooks: 1, Nodes: []int{1}}
	if u := os.Getenv(testdb.EnvPostgres); u != "" {
		o.DatabaseURL, o.Nodes = u, []int{1, 2}
	}
	var progress bytes.Buffer
	o.Stderr = &progress
	res, err := HTTP(context.Background(), o)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if len(res.Runs) != len(o.Nodes) || len(res.Ratios) != len(o.Nodes) {
		t.Fatalf("%d runs for %v", len(res.Runs), o.Nodes)
	}
	defer func() {
		if t.Failed() {
			t.Log(progress.String())
		}
	}()
	for i, r := range res.Runs {
		if r.Nodes != o.Nodes[i] || r.HealthzPerSec <= 0 || r.PerSec <= 0 || r.ServiceCPUus <= 0 {
			t.Errorf("run %d: %+v", i, r)
		}
		if len(r.Ops) != 6 {
			t.Errorf("run %d: %d operations, want the 6 of the mix", i, len(r.Ops))
		}
		for _, f := range r.Ops {
			if f.Requests == 0 || f.Errors != 0 || f.P50ms <= 0 || f.P99ms < f.P50ms {
				t.Errorf("run %d, %s: %+v", i, f.Op, f)
			}
		}
		if r.Writes == 0 || r.Deliveries < int64(r.Writes) {
			t.Errorf("run %d: %d writes, %d webhook deliveries", i, r.Writes, r.Deliveries)
		}
	}
}
