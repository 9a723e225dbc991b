package store

import (
	"context"
	"fmt"
	"html"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/messaging"
)

// Snippets come out of the database with the matches between these two
// characters, which a message body cannot hold (control characters are
// refused), then become <mark> and </mark> around HTML-escaped text.
const (
	markOpen  = "\x01"
	markClose = "\x02"
)

var markTags = strings.NewReplacer(markOpen, "<mark>", markClose, "</mark>")

func markSnippet(raw string) string { return markTags.Replace(html.EscapeString(raw)) }

// Search finds the viewer's messages matching every term, best first.
// Both engines answer it inside their full-text index, limited to the
// viewer's current conversations there (PostgreSQL: the conversation's
// lexeme in the text vector; SQLite: terms of each conversation,
// messaging_terms.go), so a common word costs what its matches in those
// conversations cost, not what its matches everywhere do.
func (s *Messaging) Search(ctx context.Context, q *messaging.SearchQuery) ([]messaging.Found, error) {
	a := &sqlArgs{}
	viewer := a.add(q.ViewerID)
	var where []string
	where = append(where, `m.deleted_at IS NULL`, mayRead(viewer, "m"))
	if q.From != nil {
		where = append(where, `m.created_at >= `+a.add(micros(*q.From)))
	}
	if q.To != nil {
		where = append(where, `m.created_at < `+a.add(micros(*q.To)))
	}
	convs := []string{q.ConversationID}
	if q.ConversationID == "" {
		var err error
		if convs, err = s.currentConversations(ctx, q.ViewerID); err != nil {
			return nil, err
		}
	}
	if len(convs) == 0 {
		return nil, nil
	}
	if s.db.Dialect == SQLite {
		return s.searchSQLite(ctx, q, a, where, convs)
	}
	anyConv, allConvs, err := s.termQueries(ctx, convs, strings.Join(q.Terms, " "))
	if err != nil || len(anyConv) == 0 {
		return nil, err
	}
	text := a.add(strings.Join(q.Terms, " "))
	opts := a.add(`StartSel=` + markOpen + `, StopSel=` + markClose + `, MaxWords=24, MinWords=8, MaxFragments=2, FragmentDelimiter=" … "`)
	// The terms are the words in each of the conversations (migration
	// 00090), so a match is in one of them by construction. The index is
	// asked once per conversation (a query each, ANY): one query ORing
	// every conversation made the index test that whole query against
	// each candidate, three times the cost. The newest SearchWindow
	// matches are ranked (ts_rank on those alone, not on every match
	// before the cut); the headline (the costly part) is made for the page
	// alone. seq + 0: walking the primary key backwards and testing each
	// message until enough match (the planner's pick for a LIMIT) reads a
	// large part of the table when the words are rare in the caller's
	// conversations; the index lookup and a sort of its matches is
	// bounded by them.
	query := `SELECT ` + messageColumns + `, ts_headline('english', m.body, plainto_tsquery('english', ` + text + `), ` + opts + `) FROM (
		SELECT m.*, ts_rank(m.search_terms, ` + a.add(allConvs) + `::tsquery) AS rank FROM (
			SELECT m.* FROM messages m
			WHERE m.search_terms @@ ANY(` + a.add(anyConv) + `::tsquery[]) AND ` + strings.Join(where, " AND ") + `
			ORDER BY m.seq + 0 DESC LIMIT ` + a.add(messaging.SearchWindow) + `) m
		ORDER BY rank DESC, m.seq DESC
		LIMIT ` + a.add(q.Limit) + ` OFFSET ` + a.add(q.Offset) + `) m
		ORDER BY m.rank DESC, m.seq DESC`
	rows, err := s.db.QueryContext(ctx, query, a.list...)
	if err != nil {
		return nil, fmt.Errorf("store: search messages: %w", err)
	}
	defer rows.Close()
	var out []messaging.Found
	for rows.Next() {
		var snippet string
		m, err := scanMessage(rows, &snippet)
		if err != nil {
			return nil, fmt.Errorf("store: search messages: %w", err)
		}
		out = append(out, messaging.Found{Message: m, Snippet: markSnippet(snippet)})
	}
	return out, rows.Err()
}

// termQueries returns the text queries of words in each of convs (as
// message_terms_query makes them, migration 00090: every word's lexeme
// as a term of the conversation), one per conversation and all of them
// ORed; none when the words hold no lexeme (stop words only). PostgreSQL
// finds the lexemes once; the queries are written here.
func (s *Messaging) termQueries(ctx context.Context, convs []string, words string) (each []string, all string, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT lexeme FROM unnest(to_tsvector('english', $1))`, words)
	if err != nil {
		return nil, "", fmt.Errorf("store: search messages: %w", err)
	}
	lexemes, err := scanStrings(rows)
	if err != nil || len(lexemes) == 0 {
		return nil, "", err
	}
	quote := strings.NewReplacer(`\`, `\\`, `'`, `''`)
	each = make([]string, len(convs))
	for i, c := range convs {
		terms := make([]string, len(lexemes))
		for j, l := range lexemes {
			terms[j] = "'" + quote.Replace(c+"/"+l) + "'"
		}
		each[i] = "(" + strings.Join(terms, " & ") + ")"
	}
	return each, strings.Join(each, " | "), nil
}

func (s *Messaging) currentConversations(ctx context.Context, userID string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT conversation_id FROM conversation_members WHERE user_id = $1 AND left_at IS NULL`, userID)
	if err != nil {
		return nil, fmt.Errorf("store: list conversations: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
