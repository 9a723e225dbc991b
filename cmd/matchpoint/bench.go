package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/bench"
)

// benchUsage lists every bench of internal/bench.
func benchUsage() string {
	var b strings.Builder
	b.WriteString("usage: matchpoint bench <name> [flags]\n\n")
	for _, c := range bench.Commands {
		fmt.Fprintf(&b, "  %-11s %s\n", c.Name, c.Summary)
	}
	b.WriteString("\nBenches of the service run it on a throwaway database: a temporary SQLite\nfile, or a fresh schema of --postgres (dropped afterwards). Progress goes to\nstderr, figures to stdout. Run \"matchpoint bench <name> -h\" for its flags.\n")
	return b.String()
}

func benchCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 0:
		fmt.Fprint(stderr, benchUsage())
		return errUsage
	case isHelp(args[0]):
		fmt.Fprint(stdout, benchUsage())
		return errHelp
	}
	for _, c := range bench.Commands {
		if c.Name != args[0] {
			continue
		}
		fs := newFlagSet("bench "+c.Name, "usage: matchpoint bench "+c.Name+" [flags]\n\n"+c.Summary+"\n")
		run := c.Flags(fs)
		cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
		if _, err := parseArgs(fs, args[1:], 0, stdout, stderr); err != nil {
			return err
		}
		if *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
			defer pprof.StopCPUProfile()
		}
		return run(ctx, stdout, stderr)
	}
	fmt.Fprintf(stderr, "matchpoint bench: unknown bench command %q\n\n%s", args[0], benchUsage())
	return errUsage
}
