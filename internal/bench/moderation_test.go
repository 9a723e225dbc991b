package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"strings"
	"testing"
)

// runCommand runs the bench called name with args, as the CLI would.
func runCommand(t *testing.T, name string, args []string, stdout, stderr *bytes.Buffer) error {
	t.Helper()
	for _, c := range Commands {
		if c.Name == name {
			fs := flag.NewFlagSet(name, flag.ContinueOnError)
			run := c.Flags(fs)
			if err := fs.Parse(args); err != nil {
				return err
			}
			return run(context.Background(), stdout, stderr)
		}
	}
	t.Fatalf("no bench %q", name)
	return nil
}

func TestModerationCommandPrintsTheFigures(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := runCommand(t, "moderation", []string{"--json", "--rounds", "1", "--duration", "200ms"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var r ModerationResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if r.HeldOut.Texts < 200 || len(r.HeldOut.Categories) != 11 || r.HeldOut.Obfuscated == 0 {
		t.Errorf("held-out report: %+v", r.HeldOut)
	}
	if r.Classifier.Davidson.Rows == 0 || r.Classifier.SMS.Rows == 0 || r.Throughput.ChecksPerSecond <= 0 || r.EngineVersion == "" {
		t.Errorf("result: %+v", r)
	}
	if !strings.Contains(errOut.String(), "throughput round 1 of 1") {
		t.Errorf("no progress on stderr: %q", errOut.String())
	}
	out.Reset()
	printModeration(&out, &r)
	for _, want := range []string{"block precision", "false flags", "obfuscated/clean", "Davidson", "SMS Spam Collection", "checks/s per core"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q", want)
		}
	}
	if err := runCommand(t, "moderation", []string{"--rounds", "0"}, &out, &errOut); err == nil {
		t.Error("--rounds 0 accepted")
	}
}
