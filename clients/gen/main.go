// Command gen writes the generated half of the client libraries (types and
// one method per operation) from the service's OpenAPI document:
//
//	go run ./clients/gen            # the document of this checkout's service
//	go run ./clients/gen -spec F    # a saved document (a file or an http URL)
//
// Without -spec it assembles the service in process over a temporary SQLite
// database and reads GET /openapi.json from its handler, so the libraries
// follow exactly what this checkout serves. The hand-written halves (client
// core, errors, retries, OAuth, webhooks) live beside the generated files.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"go/format"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/config"
)

func main() {
	spec := flag.String("spec", "", "OpenAPI document: a file or an http(s) URL (default: this checkout's service)")
	out := flag.String("out", "", "the clients directory (default: the one beside this program)")
	flag.Parse()
	if err := run(*spec, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(spec, out string) error {
	raw, err := document(spec)
	if err != nil {
		return err
	}
	api, err := load(raw)
	if err != nil {
		return err
	}
	if out == "" {
		_, file, _, _ := runtime.Caller(0)
		out = filepath.Join(filepath.Dir(file), "..")
	}
	files := map[string][]byte{}
	goTypes, goOps := genGo(api)
	for name, src := range map[string][]byte{"go/types_gen.go": goTypes, "go/operations_gen.go": goOps} {
		formatted, err := format.Source(src)
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		files[name] = formatted
	}
	files["python/matchpoint/_types.py"], files["python/matchpoint/_operations.py"] = genPython(api)
	files["swift/Sources/Matchpoint/Types.swift"], files["swift/Sources/Matchpoint/Operations.swift"] = genSwift(api)
	for name, src := range files {
		path := filepath.Join(out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, src, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "gen: %d operations, %d types, %d webhook kinds\n", len(api.Ops), len(api.Models), len(api.Webhooks))
	return nil
}

func document(spec string) ([]byte, error) {
	switch {
	case strings.HasPrefix(spec, "http://") || strings.HasPrefix(spec, "https://"):
		res, err := http.Get(spec)
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		return io.ReadAll(res.Body)
	case spec != "":
		return os.ReadFile(spec)
	}
	dir, err := os.MkdirTemp("", "matchpoint-gen-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// The base URL only shows in the document's servers and OAuth URLs,
	// which the libraries take from their caller instead.
	cfg := config.Config{DatabaseURL: "sqlite://" + filepath.Join(dir, "gen.db"), BaseURL: "http://localhost:8080", DocsURL: "http://localhost:8080/docs/errors"}
	a, err := app.Open(context.Background(), cfg, app.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	defer a.Close()
	rec := httptest.NewRecorder()
	a.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("GET /openapi.json: %d", rec.Code)
	}
	return bytes.Clone(rec.Body.Bytes()), nil
}
