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
// SQLite answers it inside the full-text index: the terms in the body AND
// one of the viewer's conversations in the conversation column. PostgreSQL
// intersects the GIN index's matches with the viewer's memberships.
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
	var query string
	if s.db.Dialect == Postgres {
		tq := `plainto_tsquery('english', ` + a.add(strings.Join(q.Terms, " ")) + `)`
		opts := a.add(`StartSel=` + markOpen + `, StopSel=` + markClose + `, MaxWords=24, MinWords=8, MaxFragments=2, FragmentDelimiter=" … "`)
		if q.ConversationID != "" {
			where = append(where, `m.conversation_id = `+a.add(q.ConversationID))
		}
		query = `SELECT ` + messageColumns + `, ts_headline('english', m.body, ` + tq + `, ` + opts + `)
			FROM messages m JOIN conversation_members cm ON cm.conversation_id = m.conversation_id AND cm.user_id = ` + viewer + ` AND cm.left_at IS NULL
			WHERE m.search_vector @@ ` + tq + ` AND ` + strings.Join(where, " AND ") + `
			ORDER BY ts_rank(m.search_vector, ` + tq + `) DESC, m.seq DESC`
	} else {
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
		match := `body : (` + quoteAll(q.Terms, " ") + `) AND conversation_id : (` + quoteAll(convs, " OR ") + `)`
		query = `SELECT ` + messageColumns + `, snippet(messages_fts, 0, ` + a.add(markOpen) + `, ` + a.add(markClose) + `, '…', 24)
			FROM messages_fts CROSS JOIN messages m ON m.seq = messages_fts.rowid
			WHERE messages_fts MATCH ` + a.add(match) + ` AND ` + strings.Join(where, " AND ") + `
			ORDER BY bm25(messages_fts, 1.0, 0.0), m.seq DESC`
	}
	query += ` LIMIT ` + a.add(q.Limit) + ` OFFSET ` + a.add(q.Offset)
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
