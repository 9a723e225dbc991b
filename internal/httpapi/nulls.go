package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
)

// refuseNulls is Huma middleware that refuses null for a body field whose
// schema is not nullable. Huma's validator lets null through for optional
// fields, and the decoder then treats it as absent, so {"bio": null} would
// quietly change nothing; a client that means "clear it" deserves to hear
// that this field cannot be cleared that way. Nullable fields (a PATCH's
// latitude, which null clears) pass.
func (s *server) refuseNulls(api huma.API) func(huma.Context, func(huma.Context)) {
	reg := api.OpenAPI().Components.Schemas
	return func(ctx huma.Context, next func(huma.Context)) {
		op := ctx.Operation()
		if op.RequestBody == nil || op.RequestBody.Content["application/json"] == nil {
			next(ctx)
			return
		}
		r, _ := humago.Unwrap(ctx)
		body, err := io.ReadAll(r.Body)
		if err != nil {
			next(ctx) // the operation reports an unreadable body itself
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var doc any
		if len(bytes.TrimSpace(body)) == 0 || json.Unmarshal(body, &doc) != nil {
			next(ctx) // not JSON: the operation refuses it with its own error
			return
		}
		if param, typ, ok := firstNull(reg, op.RequestBody.Content["application/json"].Schema, doc, ""); ok {
			_ = huma.WriteErr(api, ctx, http.StatusUnprocessableEntity, "", apperr.InvalidParam(param, "validation_failed",
				"%s: expected %s, got null (leave the field out to keep its value)", param, typ))
			return
		}
		next(ctx)
	}
}

// firstNull walks doc along schema and returns the path of the first null
// the schema does not allow, with the type it expects.
func firstNull(reg huma.Registry, schema *huma.Schema, doc any, path string) (string, string, bool) {
	if schema == nil {
		return "", "", false
	}
	if schema.Ref != "" {
		schema = reg.SchemaFromRef(schema.Ref)
		if schema == nil {
			return "", "", false
		}
	}
	switch v := doc.(type) {
	case map[string]any:
		for name, val := range v {
			prop := schema.Properties[name]
			if prop == nil {
				// A map's values follow its additionalProperties.
				if ap, ok := schema.AdditionalProperties.(*huma.Schema); ok {
					prop = ap
				}
			}
			if prop == nil {
				continue // unknown fields are the validator's to refuse
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			if val == nil {
				resolved := prop
				if prop.Ref != "" {
					resolved = reg.SchemaFromRef(prop.Ref)
				}
				if resolved != nil && !resolved.Nullable && !prop.Nullable {
					return p, typeName(resolved), true
				}
				continue
			}
			if p, t, ok := firstNull(reg, prop, val, p); ok {
				return p, t, ok
			}
		}
	case []any:
		for i, val := range v {
			p := path + "[" + strconv.Itoa(i) + "]"
			if val == nil && schema.Items != nil && !schema.Items.Nullable {
				return p, typeName(schema.Items), true
			}
			if p, t, ok := firstNull(reg, schema.Items, val, p); ok {
				return p, t, ok
			}
		}
	}
	return "", "", false
}

func typeName(s *huma.Schema) string {
	if s.Type == "" {
		return "a value"
	}
	return s.Type
}
