package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"modernc.org/sqlite"
)

// SQLite's index of message text (migration 00090) holds each word of a
// message joined to its conversation: "tennis" in conversation c is the
// term <key of c>tennis. A search over the caller's conversations looks up
// one term per conversation and word, whose postings are exactly the
// matches in that conversation, so it reads what it finds and nothing
// else. With the words and conversations indexed apart (00040), the index
// had to intersect every posting of the caller's conversations with every
// posting of the word: 35 ms of CPU for one word at 1M messages.
//
// The key is digits only, of fixed width: the tokenizer keeps the term
// whole, and its stemmer (porter), which reads digits as consonants, stems
// the word part as it would the word alone. Two conversations may share a
// key (a hash); the search then reads a few postings more, and still
// checks each match's conversation.

const convKeyDigits = 15

// convKey is the key of a conversation's terms.
func convKey(conversationID string) string {
	h := fnv.New64a()
	h.Write([]byte(conversationID))
	return fmt.Sprintf("%0*d", convKeyDigits, h.Sum64()%1_000_000_000_000_000)
}

// messageTerms is what the index holds of a message: its words, each
// behind its conversation's key. The tokenizer lowers case, removes
// diacritics and stems each term.
func messageTerms(conversationID, body string) string {
	key := convKey(conversationID)
	words := messaging.Words(body)
	var b strings.Builder
	b.Grow(len(body) + len(words)*(convKeyDigits+1))
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(key)
		b.WriteString(w)
	}
	return b.String()
}

// termsMatch is the index query for messages holding every word in one of
// the conversations: (c1w1 AND c1w2) OR (c2w1 AND c2w2) ... Each term is
// quoted, so nothing in a word is query syntax.
func termsMatch(words, conversationIDs []string) string {
	var b strings.Builder
	for i, c := range conversationIDs {
		if i > 0 {
			b.WriteString(" OR ")
		}
		key := convKey(c)
		b.WriteByte('(')
		for j, w := range words {
			if j > 0 {
				b.WriteString(" AND ")
			}
			b.WriteByte('"')
			b.WriteString(key)
			b.WriteString(strings.ReplaceAll(w, `"`, `""`))
			b.WriteByte('"')
		}
		b.WriteByte(')')
	}
	return b.String()
}

// insertTerms writes new messages' terms into SQLite's index (a message
// sent holds its terms until its transaction's work ends, pending.go;
// migration 00093 took the index's insert trigger off).
func insertTerms(ctx context.Context, tx *sql.Tx, ts []heldTerms) error {
	for len(ts) > 0 {
		part := ts[:min(len(ts), 1000)]
		ts = ts[len(part):]
		rows := make([]string, len(part))
		args := make([]any, 0, 2*len(part))
		for i, t := range part {
			rows[i] = "(" + placeholders(2*i+1, 2) + ")"
			args = append(args, t.seq, messageTerms(t.conversationID, t.body))
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO message_terms (rowid, terms) VALUES `+strings.Join(rows, ", "), args...); err != nil {
			return fmt.Errorf("store: index messages: %w", err)
		}
	}
	return nil
}

// The triggers of migration 00090 call matchpoint_message_terms(
// conversation_id, body) on every connection of this program's driver.
func init() {
	sqlite.MustRegisterDeterministicScalarFunction("matchpoint_message_terms", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		return messageTerms(textArg(args[0]), textArg(args[1])), nil
	})
}

func textArg(v driver.Value) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// jsonList is a list of strings as a JSON array, for json_each.
func jsonList(list []string) string {
	b, _ := json.Marshal(list)
	return string(b)
}
