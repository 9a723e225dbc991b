package httpapi

import "strings"

// ListParams are the paging parameters of every list (DECISIONS.md, Lists).
type ListParams struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"How many items to return (1-100)"`
	Cursor string `query:"cursor" maxLength:"64" doc:"next_cursor of the previous page"`
}

// List is the envelope of every list.
type List[T any] struct {
	Object     string `json:"object" enum:"list"`
	Data       []T    `json:"data"`
	HasMore    bool   `json:"has_more"`
	NextCursor string `json:"next_cursor,omitempty" doc:"Pass as cursor to get the next page"`
}

// listOf pages items fetched with limit+1: the extra one says there is more.
// Ids are time-ordered, so the last id of a page is the next cursor.
func listOf[S any, T any](items []S, limit int, id func(S) string, render func(S) T) List[T] {
	out := List[T]{Object: "list", Data: make([]T, 0, min(len(items), limit))}
	if len(items) > limit {
		items, out.HasMore = items[:limit], true
	}
	for _, it := range items {
		out.Data = append(out.Data, render(it))
	}
	if out.HasMore && len(items) > 0 {
		out.NextCursor = id(items[len(items)-1])
	}
	return out
}

// validCursor accepts the ids a list hands out (prefix + 26 base32 chars).
func validCursor(prefix, c string) bool {
	return c == "" || (strings.HasPrefix(c, prefix) && len(c) == len(prefix)+26)
}
