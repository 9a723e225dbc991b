package httpapi

import (
	"reflect"
	"strings"
	"unicode"

	"github.com/danielgtaylor/huma/v2"
)

// schemaName names the OpenAPI document's schemas: a Go type keeps its name,
// and a body declared inline is named after its operation in PascalCase
// (create-api-key -> CreateAPIKeyRequest, not Huma's Create-api-keyRequest),
// so that client generators turn every name into a type as it is.
func schemaName(t reflect.Type, hint string) string {
	name := huma.DefaultSchemaNamer(t, hint)
	if !strings.ContainsAny(name, "-_") {
		return name
	}
	var b strings.Builder
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' }) {
		// The lower-case head of the part is the word from the operation id;
		// the rest ("Request") is already capitalised.
		head := strings.IndexFunc(part, unicode.IsUpper)
		if head < 0 {
			head = len(part)
		}
		word, rest := part[:head], part[head:]
		if up, ok := initialisms[word]; ok {
			word = up
		} else if word != "" {
			word = strings.ToUpper(word[:1]) + word[1:]
		}
		b.WriteString(word + rest)
	}
	return b.String()
}

// initialisms are the words written in capitals in type names.
var initialisms = map[string]string{"api": "API", "id": "ID", "oauth": "OAuth", "url": "URL", "uri": "URI", "http": "HTTP", "json": "JSON"}
