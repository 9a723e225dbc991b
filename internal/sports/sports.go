// Package sports is the documented list of sport names the platform knows.
// Profiles, matching and events all store the canonical name, so "Ping-Pong",
// "table_tennis" and "Table Tennis" find each other.
package sports

import (
	"bufio"
	_ "embed"
	"strings"
	"sync"
)

//go:embed sports.txt
var list string

type catalogue struct {
	names   []string          // canonical names in file order
	aliases map[string]string // folded input -> canonical name
}

var load = sync.OnceValue(func() catalogue {
	c := catalogue{aliases: map[string]string{}}
	sc := bufio.NewScanner(strings.NewReader(list))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, aliases, _ := strings.Cut(line, "|")
		name = Fold(name)
		c.names = append(c.names, name)
		c.aliases[name] = name
		for _, a := range strings.Split(aliases, ",") {
			if a = Fold(a); a != "" {
				c.aliases[a] = name
			}
		}
	}
	return c
})

// Fold lower-cases s and collapses runs of spaces, hyphens and underscores
// into one space.
func Fold(s string) string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return r == ' ' || r == '-' || r == '_' || r == '\t'
	})
	return strings.Join(f, " ")
}

// Normalize returns the canonical name of a sport, or false if the name is not
// on the list.
func Normalize(s string) (string, bool) {
	n, ok := load().aliases[Fold(s)]
	return n, ok
}

// All returns the canonical names, in the list's order.
func All() []string { return append([]string(nil), load().names...) }
