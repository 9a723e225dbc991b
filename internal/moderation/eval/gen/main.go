// Command gen builds the evaluation splits from data/written.txt: ids, a
// half-and-half split of every kind, and obfuscated copies of the harmful
// texts. Run by `go generate` in the eval package.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log"
	"os"
	"sort"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/moderation"
	"github.com/matchpoint-api/matchpoint/internal/moderation/eval"
)

func main() {
	f, err := os.Open("data/written.txt")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	known := map[moderation.Category]bool{}
	for _, c := range moderation.Categories {
		known[c] = true
	}
	byKind := map[string][]eval.Item{}
	var kinds []string
	kind := ""
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "# "):
			continue
		case strings.HasPrefix(line, "## "):
			kind = strings.TrimSpace(line[3:])
			kinds = append(kinds, kind)
			continue
		}
		labels, text, ok := strings.Cut(line, " | ")
		if !ok || kind == "" {
			log.Fatalf("written.txt:%d: want \"labels | text\" under a \"## kind\"", n)
		}
		if seen[text] {
			log.Fatalf("written.txt:%d: duplicate text", n)
		}
		seen[text] = true
		it := eval.Item{Kind: kind, Text: text, Labels: []moderation.Category{}}
		if labels != "-" {
			for _, l := range strings.Split(labels, ",") {
				c := moderation.Category(strings.TrimSpace(l))
				if !known[c] {
					log.Fatalf("written.txt:%d: unknown category %q", n, c)
				}
				it.Labels = append(it.Labels, c)
			}
		}
		byKind[kind] = append(byKind[kind], it)
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	splits := map[string][]eval.Item{}
	for _, k := range kinds {
		items := byKind[k]
		// Order by a hash of the text, then alternate: half of every kind
		// in each split, and no say in which text lands where.
		sort.SliceStable(items, func(i, j int) bool { return hash(items[i].Text) < hash(items[j].Text) })
		for i := range items {
			split := eval.Dev
			if i%2 == 1 {
				split = eval.HeldOut
			}
			items[i].ID = fmt.Sprintf("%s-%s-%03d", split[:1], k, i/2+1)
			splits[split] = append(splits[split], items[i])
		}
	}
	for _, split := range []string{eval.Dev, eval.HeldOut} {
		clean := splits[split]
		out := append([]eval.Item(nil), clean...)
		for _, it := range clean {
			if !it.Harmful() {
				continue
			}
			for k, t := range eval.Obfuscations {
				out = append(out, eval.Item{ID: fmt.Sprintf("%s~%s", it.ID, t), Kind: it.Kind, Labels: it.Labels,
					Text: eval.Obfuscate(it.Text, t, hash(it.Text)+uint64(k)), Source: it.ID, Obfuscation: t})
			}
		}
		if err := write("data/"+split+".jsonl", out); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d texts, %d with obfuscated copies\n", split, len(clean), len(out))
	}
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func write(name string, items []eval.Item) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
