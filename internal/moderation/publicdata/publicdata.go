// Package publicdata holds the two public labelled data sets the
// moderation classifier is trained on (see SOURCES.md for licences and
// attribution), and the fixed split of each into training and held-out rows.
package publicdata

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/csv"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"strconv"
	"strings"
)

//go:embed davidson-labeled-tweets.csv.gz
var davidsonGz []byte

//go:embed sms-spam-collection.tsv.gz
var smsGz []byte

// Davidson classes.
const (
	Hate      = 0
	Offensive = 1
	Neither   = 2
)

// Doc is one labelled text.
type Doc struct {
	Text  string
	Label int // Davidson: Hate, Offensive, Neither; SMS: 1 spam, 0 ham
}

// HeldOut reports whether a text belongs to the held-out fifth of its data
// set, by a hash of the text: the same text always lands on the same side,
// so duplicates cannot leak from training into evaluation.
func HeldOut(text string) bool {
	h := fnv.New32a()
	h.Write([]byte(text))
	return h.Sum32()%5 == 0
}

func gunzip(b []byte) (io.Reader, error) {
	return gzip.NewReader(bytes.NewReader(b))
}

// Davidson returns the labelled tweets, HTML entities decoded.
func Davidson() ([]Doc, error) {
	r, err := gunzip(davidsonGz)
	if err != nil {
		return nil, err
	}
	cr := csv.NewReader(r)
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("davidson: %w", err)
	}
	var out []Doc
	for i, row := range rows {
		if i == 0 {
			continue
		}
		if len(row) < 7 {
			return nil, fmt.Errorf("davidson: row %d has %d fields", i, len(row))
		}
		c, err := strconv.Atoi(row[5])
		if err != nil || c < 0 || c > 2 {
			return nil, fmt.Errorf("davidson: row %d: bad class %q", i, row[5])
		}
		out = append(out, Doc{Text: html.UnescapeString(row[6]), Label: c})
	}
	return out, nil
}

// SMS returns the SMS Spam Collection, Label 1 for spam.
func SMS() ([]Doc, error) {
	r, err := gunzip(smsGz)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var out []Doc
	for i, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		label, text, ok := strings.Cut(strings.TrimRight(line, "\r"), "\t")
		if !ok {
			return nil, fmt.Errorf("sms: line %d has no tab", i+1)
		}
		switch label {
		case "Label":
			continue
		case "ham":
			out = append(out, Doc{Text: text})
		case "spam":
			out = append(out, Doc{Text: text, Label: 1})
		default:
			return nil, fmt.Errorf("sms: line %d: bad label %q", i+1, label)
		}
	}
	return out, nil
}
