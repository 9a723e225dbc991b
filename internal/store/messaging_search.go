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
// Both engines answer it inside their full-text index: the terms in the
// body AND one of the viewer's current conversations (SQLite: its
// conversation column; PostgreSQL: the conversation's lexeme in the text
// vector), so a common word costs what its matches in those conversations
// cost, not what its matches everywhere do.
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
	var query string
	if s.db.Dialect == Postgres {
		words := `plainto_tsquery('english', ` + a.add(strings.Join(q.Terms, " ")) + `)`
		// Conversation ids are lexemes of the vector too; quoted, as ids
		// they hold nothing a tsquery would read as syntax.
		inConvs := a.add(`'` + strings.Join(convs, `' | '`) + `'`)
		opts := a.add(`StartSel=` + markOpen + `, StopSel=` + markClose + `, MaxWords=24, MinWords=8, MaxFragments=2, FragmentDelimiter=" … "`)
		// The membership join keeps results exact whatever the vector
		// holds; on an expression, so the planner does not also walk the
		// conversation's messages by their position index.
		// The newest SearchWindow matches are ranked; the headline (the
		// costly part) is made for the page alone. seq + 0: walking the
		// primary key backwards and testing each message until enough
		// match (the planner's pick for a LIMIT) reads a large part of the
		// table when the words are rare in the caller's conversations;
		// the GIN lookup and a sort of its matches is bounded by them.
		query = `SELECT ` + messageColumns + `, ts_headline('english', m.body, ` + words + `, ` + opts + `) FROM (
			SELECT m.*, ts_rank(m.search_vector, ` + words + `) AS rank
			FROM messages m JOIN conversation_members cm ON cm.conversation_id = (m.conversation_id || '') AND cm.user_id = ` + viewer + ` AND cm.left_at IS NULL
			WHERE numnode(` + words + `) > 0 AND m.search_vector @@ (` + words + ` && ` + inConvs + `::tsquery) AND ` + strings.Join(where, " AND ") + `
			ORDER BY m.seq + 0 DESC LIMIT ` + a.add(messaging.SearchWindow) + `) m
			ORDER BY m.rank DESC, m.seq DESC`
	} else {
		match := `body : (` + quoteAll(q.Terms, " ") + `) AND conversation_id : (` + quoteAll(convs, " OR ") + `)`
		// The newest SearchWindow matches come straight from the index in
		// rowid order (it stops there); only they are ranked.
		query = `SELECT * FROM (SELECT ` + messageColumns + `, snippet(messages_fts, 0, ` + a.add(markOpen) + `, ` + a.add(markClose) + `, '…', 24),
				bm25(messages_fts, 1.0, 0.0) AS rank, m.seq AS pos
			FROM messages_fts CROSS JOIN messages m ON m.seq = messages_fts.rowid
			WHERE messages_fts MATCH ` + a.add(match) + ` AND ` + strings.Join(where, " AND ") + `
			ORDER BY messages_fts.rowid DESC LIMIT ` + a.add(messaging.SearchWindow) + `) ORDER BY rank, pos DESC`
	}
	// Snippets are computed for every ranked match before the page is
	// cut; measured, that costs less than ranking the page first and
	// matching again for its snippets (FTS5 runs the query once per rowid).
	query += ` LIMIT ` + a.add(q.Limit) + ` OFFSET ` + a.add(q.Offset)
	rows, err := s.db.QueryContext(ctx, query, a.list...)
	if err != nil {
		return nil, fmt.Errorf("store: search messages: %w", err)
	}
	defer rows.Close()
	var out []messaging.Found
	for rows.Next() {
		var snippet string
		var rank float64
		var pos int64
		extra := []any{&snippet}
		if s.db.Dialect == SQLite {
			extra = append(extra, &rank, &pos)
		}
		m, err := scanMessage(rows, extra...)
		if err != nil {
			return nil, fmt.Errorf("store: search messages: %w", err)
		}
		out = append(out, messaging.Found{Message: m, Snippet: markSnippet(snippet)})
	}
	return out, rows.Err()
}

// quoteAll quotes each word as an FTS5 string (nothing in it is syntax)
// and joins them with sep.
func quoteAll(words []string, sep string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
	}
	return strings.Join(quoted, sep)
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
