package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/matchpoint-api/matchpoint/internal/messaging"
)

// searchSQLite answers Search on SQLite. The index yields the newest
// SearchWindow matches in rowid order (it stops there); they are ranked
// here, and the page is read whole. The conversation is checked again on
// each match, as two conversations may share a key.
//
// Ranking is BM25 over the words of each match (k1 = 1.2, b = 0.75)
// without the inverse document frequency: every match holds every word,
// and looking up how common each term is cost SQLite's bm25() as much as
// the search itself (one more lookup per conversation and word).
func (s *Messaging) searchSQLite(ctx context.Context, q *messaging.SearchQuery, a *sqlArgs, where []string, convs []string) ([]messaging.Found, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT m.seq, m.body FROM message_terms CROSS JOIN messages m ON m.seq = message_terms.rowid
		WHERE message_terms MATCH `+a.add(termsMatch(q.Terms, convs))+`
			AND m.conversation_id IN (SELECT value FROM json_each(`+a.add(jsonList(convs))+`))
			AND `+strings.Join(where, " AND ")+`
		ORDER BY message_terms.rowid DESC LIMIT `+a.add(messaging.SearchWindow), a.list...)
	if err != nil {
		return nil, fmt.Errorf("store: search messages: %w", err)
	}
	type hit struct {
		seq   int64
		score float64
	}
	var hits []hit
	var lengths []int
	var bodies []string
	for rows.Next() {
		var h hit
		var body string
		if err := rows.Scan(&h.seq, &body); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: search messages: %w", err)
		}
		hits, bodies = append(hits, h), append(bodies, body)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: search messages: %w", err)
	}
	if q.Offset >= len(hits) {
		return nil, nil
	}
	m := newTermMatcher(q.Terms)
	total := 0
	freqs := make([][]int, len(hits))
	for i, body := range bodies {
		var n int
		freqs[i], n = m.count(body)
		lengths = append(lengths, n)
		total += n
	}
	avg := float64(max(total, 1)) / float64(len(hits))
	const k1, b = 1.2, 0.75
	for i := range hits {
		norm := k1 * (1 - b + b*float64(lengths[i])/avg)
		for _, tf := range freqs[i] {
			hits[i].score += float64(tf) * (k1 + 1) / (float64(tf) + norm)
		}
	}
	slices.SortStableFunc(hits, func(x, y hit) int { // newest first among equals: already in that order
		return cmp.Compare(y.score, x.score)
	})
	page := hits[q.Offset:min(len(hits), q.Offset+q.Limit)]
	seqs := make([]int64, len(page))
	for i, h := range page {
		seqs[i] = h.seq
	}
	list, _ := json.Marshal(seqs)
	rows, err = s.db.QueryContext(ctx, `SELECT `+messageColumns+`, m.seq FROM messages m WHERE m.seq IN (SELECT value FROM json_each($1))`, string(list))
	if err != nil {
		return nil, fmt.Errorf("store: search messages: %w", err)
	}
	defer rows.Close()
	bySeq := make(map[int64]*messaging.Message, len(page))
	for rows.Next() {
		var seq int64
		msg, err := scanMessage(rows, &seq)
		if err != nil {
			return nil, fmt.Errorf("store: search messages: %w", err)
		}
		bySeq[seq] = msg
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: search messages: %w", err)
	}
	out := make([]messaging.Found, 0, len(page))
	for _, h := range page {
		if msg := bySeq[h.seq]; msg != nil {
			out = append(out, messaging.Found{Message: msg, Snippet: markSnippet(textSnippet(msg.Body, q.Terms))})
		}
	}
	return out, nil
}

// termMatcher counts the words of a text that match search terms as the
// index matches them (folded and stemmed, foldWord).
type termMatcher struct {
	stems []string
	first []rune // each stem's first letter: stemming never changes it
}

func newTermMatcher(terms []string) *termMatcher {
	m := &termMatcher{}
	for _, t := range terms {
		st := foldWord(t)
		r, _ := utf8.DecodeRuneInString(st)
		m.stems, m.first = append(m.stems, st), append(m.first, r)
	}
	return m
}

// count returns how often each term occurs in text, and its word count.
func (m *termMatcher) count(text string) ([]int, int) {
	freq := make([]int, len(m.stems))
	n := 0
	for _, w := range messaging.Words(text) {
		n++
		r, _ := utf8.DecodeRuneInString(w)
		r = unicode.ToLower(r)
		var st string
		for i, f := range m.first {
			if f != r && r < utf8.RuneSelf {
				continue
			}
			if st == "" {
				st = foldWord(w)
			}
			if st == m.stems[i] {
				freq[i]++
			}
		}
	}
	return freq, n
}
