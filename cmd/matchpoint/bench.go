package main

import (
	"context"
	"fmt"
	"io"
)

func bench(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return fmt.Errorf("not yet")
}
