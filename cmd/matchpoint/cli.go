package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

var (
	// errHelp: help was asked for and printed on stdout; exit 0.
	errHelp = errors.New("help")
	// errUsage: the command line was wrong, and the error and the usage
	// were printed on stderr; exit 2.
	errUsage = errors.New("usage")
)

// newFlagSet makes the flags of one command; synopsis heads its help.
func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, synopsis)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintln(w, "\nflags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// parseArgs parses args into fs and returns the positional arguments, of
// which the command takes at most maxArgs. Flags may come before or after
// them (`migrate status --database-url ...`). --help prints the command's
// usage on stdout (errHelp); a bad flag or a stray argument prints what is
// wrong and the usage on stderr (errUsage).
func parseArgs(fs *flag.FlagSet, args []string, maxArgs int, stdout, stderr io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard) // the flag package's own messages: printed below, once
	var positional []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
			return nil, errHelp
		}
		if err != nil {
			return nil, usageError(fs, stderr, err.Error())
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			positional = append(positional, rest...) // after "--" nothing is a flag
			break
		}
		positional, args = append(positional, rest[0]), rest[1:]
	}
	if len(positional) > maxArgs {
		stray := positional[maxArgs:]
		msg := fmt.Sprintf("unexpected argument %q", stray[0])
		if len(stray) > 1 {
			msg = fmt.Sprintf("unexpected arguments %q", strings.Join(stray, " "))
		}
		return nil, usageError(fs, stderr, msg)
	}
	return positional, nil
}

// usageError prints msg and the command's usage on stderr.
func usageError(fs *flag.FlagSet, stderr io.Writer, msg string) error {
	fmt.Fprintf(stderr, "matchpoint %s: %s\n\n", fs.Name(), msg)
	fs.SetOutput(stderr)
	fs.Usage()
	return errUsage
}
