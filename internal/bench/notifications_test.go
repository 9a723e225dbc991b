package bench

import (
	"bytes"
	"strings"
	"testing"
)

// TestNotificationsCommandPrintsTheFigures runs the bench small: every
// push arrives (it waits for all of them: 3 other members x 3 messages)
// and the figures are printed.
func TestNotificationsCommandPrintsTheFigures(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := runCommand(t, "notifications", []string{"--members", "4", "--messages", "3", "--rounds", "1", "--workers", "2"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	for _, want := range []string{"a group of 4 members", "fan-out written", "end to end", "baseline", "end to end / baseline"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errOut.String(), "round 1: 9 notifications") {
		t.Errorf("progress: %s", errOut.String())
	}
}
