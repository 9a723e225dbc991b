package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

// TestMessagingCommandPrintsTheFigures runs `bench messaging` small on each
// engine: every figure the issue asks for is there (send rate, at the
// bench's clients and at capacity; search and the stream's delivery), no
// request failed and no delivery was lost.
func TestMessagingCommandPrintsTheFigures(t *testing.T) {
	engines := []string{""}
	if pg := os.Getenv(testdb.EnvPostgres); pg != "" {
		engines = append(engines, pg)
	}
	for _, pg := range engines {
		args := []string{"--messages", "1000", "--rounds", "1", "--duration", "300ms", "--concurrency", "2", "--send-clients", "4",
			"--stream-clients", "4", "--stream-messages", "5"}
		if pg != "" {
			args = append(args, "--postgres", pg)
		}
		var out, errOut bytes.Buffer
		if err := runCommand(t, "messaging", args, &out, &errOut); err != nil {
			t.Fatalf("%v\n%s", err, errOut.String())
		}
		var r MessagingResult
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		for name, f := range map[string]MessagingFigures{"read_one": r.Read, "search": r.Search, "search_two": r.Search2,
			"send_spread": r.SendSpread, "send_one": r.SendOne, "send_capacity": r.SendCapacity} {
			if f.Requests == 0 || f.PerSecond <= 0 || f.P99MS <= 0 || f.Errors != 0 {
				t.Errorf("%s on %s: %+v", name, r.Engine, f)
			}
		}
		if r.SendClients != 4 || r.Messages != 1000 {
			t.Errorf("%s: send_clients %d, messages %d", r.Engine, r.SendClients, r.Messages)
		}
		if s := r.Stream; s == nil || s.Deliveries == 0 || s.P99MS <= 0 || s.Lost != 0 || s.Dropped != 0 {
			t.Errorf("stream on %s: %+v", r.Engine, s)
		}
	}
}
