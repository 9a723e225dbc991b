package web

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"
)

// ErrorCode is one entry of the error reference.
type ErrorCode struct {
	Code    string
	Status  int
	Meaning string
}

// ErrorReferenceData is what the error reference page lists.
type ErrorReferenceData struct {
	OAuth []ErrorCode
	API   []ErrorCode
}

// ErrorLink is the address of code's entry in the error reference at
// docsURL: every error_uri and problem type is built here.
func ErrorLink(docsURL, code string) string { return docsURL + "#" + code }

// ErrorReference serves /docs/errors; every error_uri and problem type
// points at an anchor on it.
func (p *Pages) ErrorReference(d ErrorReferenceData) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.render(w, r, http.StatusOK, "errors", map[string]any{"Title": "Error reference", "OAuth": d.OAuth, "API": d.API})
	})
}

// docField is one row of a parameter, body, response or type table.
type docField struct {
	Name        string
	Type        docType
	Description string
	Rules       string // bounds and formats, in words
	Required    bool
	Fields      []docField // of a response body that is an unnamed object
}

// docType is a type as the page shows it: text, with each named schema in it
// a link to that schema's table further down the page.
type docType []typePart

type typePart struct{ Text, Schema string }

// String is the type as plain text.
func (t docType) String() string {
	var b strings.Builder
	for _, p := range t {
		b.WriteString(p.Text)
	}
	return b.String()
}

type docOperation struct {
	ID, Method, Path, Summary, Description string
	Scopes                                 []string
	Params                                 []docField
	Body                                   []docField
	BodyType                               string  // media type
	BodySchema                             docType // the named body type, if any
	Responses                              []docField
}

type docSection struct {
	Tag        string
	Operations []docOperation
}

// docSchema is a named type of the document, shown with its fields so that
// every type an operation names can be read on the page.
type docSchema struct {
	Name, Description string
	Type              docType // for a schema that is not an object
	Fields            []docField
}

type reference struct {
	Sections []docSection
	Schemas  []docSchema
}

// APIReference serves /docs: a readable reference built from the OpenAPI
// document on the server, so it needs no script and no CDN.
func (p *Pages) APIReference(o *huma.OpenAPI) http.Handler {
	// Built once, on first request: the OpenAPI document is complete only
	// after every route is registered.
	ref := sync.OnceValue(func() reference { return buildReference(o) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := ref()
		p.render(w, r, http.StatusOK, "apidocs", map[string]any{
			"Title": "API reference", "Info": o.Info, "Sections": d.Sections, "Schemas": d.Schemas, "Server": serverURL(o),
		})
	})
}

func serverURL(o *huma.OpenAPI) string {
	if len(o.Servers) > 0 {
		return o.Servers[0].URL
	}
	return ""
}

func buildReference(o *huma.OpenAPI) reference {
	byTag := map[string][]docOperation{}
	var tags []string
	paths := make([]string, 0, len(o.Paths))
	for path := range o.Paths {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		item := o.Paths[path]
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			d := docOperation{ID: op.OperationID, Method: op.Method, Path: path, Summary: op.Summary, Description: op.Description}
			for _, alt := range op.Security {
				for _, scopes := range alt {
					for _, s := range scopes {
						if !slices.Contains(d.Scopes, s) {
							d.Scopes = append(d.Scopes, s)
						}
					}
				}
			}
			for _, prm := range op.Parameters {
				d.Params = append(d.Params, docField{Name: prm.Name + " (" + prm.In + ")", Type: typeOf(o, prm.Schema),
					Description: describe(prm.Description, prm.Schema), Rules: rules(prm.Schema), Required: prm.Required})
			}
			if op.RequestBody != nil {
				for ct, mt := range op.RequestBody.Content {
					d.BodyType = ct
					d.Body = fieldsOf(o, mt.Schema)
					if _, name := resolve(o, mt.Schema); name != "" {
						d.BodySchema = typeOf(o, mt.Schema)
					}
				}
			}
			codes := make([]string, 0, len(op.Responses))
			for code := range op.Responses {
				codes = append(codes, code)
			}
			sort.Strings(codes)
			for _, code := range codes {
				resp := op.Responses[code]
				row := docField{Name: code, Description: resp.Description}
				for _, mt := range resp.Content {
					row.Type = typeOf(o, mt.Schema)
					if _, name := resolve(o, mt.Schema); name == "" {
						row.Fields = fieldsOf(o, mt.Schema)
					}
				}
				d.Responses = append(d.Responses, row)
			}
			tag := "Other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			if _, ok := byTag[tag]; !ok {
				tags = append(tags, tag)
			}
			byTag[tag] = append(byTag[tag], d)
		}
	}
	var ref reference
	for _, t := range tags {
		ref.Sections = append(ref.Sections, docSection{Tag: t, Operations: byTag[t]})
	}
	if o.Components != nil && o.Components.Schemas != nil {
		all := o.Components.Schemas.Map()
		names := make([]string, 0, len(all))
		for n := range all {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			sch := all[n]
			ds := docSchema{Name: n, Description: sch.Description, Fields: fieldsOf(o, sch)}
			if len(ds.Fields) == 0 {
				ds.Type = typeOf(o, sch)
			}
			ref.Schemas = append(ref.Schemas, ds)
		}
	}
	return ref
}

// resolve follows a $ref; name is the schema's name when s was one.
func resolve(o *huma.OpenAPI, s *huma.Schema) (r *huma.Schema, name string) {
	if s == nil {
		return nil, ""
	}
	if s.Ref != "" {
		name := s.Ref[strings.LastIndex(s.Ref, "/")+1:]
		if o.Components != nil && o.Components.Schemas != nil {
			if r := o.Components.Schemas.Map()[name]; r != nil {
				return r, name
			}
		}
		return nil, name
	}
	return s, ""
}

func text(s string) docType { return docType{{Text: s}} }

func typeOf(o *huma.OpenAPI, s *huma.Schema) docType {
	r, name := resolve(o, s)
	if name != "" {
		if r == nil {
			return text(name)
		}
		return docType{{Text: name, Schema: name}}
	}
	if r == nil {
		return nil
	}
	var t docType
	switch {
	case r.Type == "array":
		t = append(text("array of "), typeOf(o, r.Items)...)
	case r.Type == "object" && r.AdditionalProperties != nil:
		if v, ok := r.AdditionalProperties.(*huma.Schema); ok {
			t = append(text("map of string to "), typeOf(o, v)...)
		} else {
			t = text("object")
		}
	case r.Type == "":
		t = text("any")
	case len(r.Enum) > 0:
		var vals []string
		for _, v := range r.Enum {
			vals = append(vals, fmt.Sprint(v))
		}
		t = text(r.Type + ": " + strings.Join(vals, " | "))
	default:
		t = text(r.Type)
	}
	if r.Nullable {
		t = append(t, typePart{Text: " or null"})
	}
	return t
}

func describe(desc string, s *huma.Schema) string {
	if desc != "" {
		return desc
	}
	if s != nil {
		return s.Description
	}
	return ""
}

// rules says in words what bounds and format a value must keep.
func rules(s *huma.Schema) string {
	if s == nil {
		return ""
	}
	var out []string
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	switch {
	case s.MinLength != nil && s.MaxLength != nil:
		out = append(out, fmt.Sprintf("%d to %d characters", *s.MinLength, *s.MaxLength))
	case s.MaxLength != nil:
		out = append(out, fmt.Sprintf("at most %d characters", *s.MaxLength))
	case s.MinLength != nil:
		out = append(out, fmt.Sprintf("at least %d characters", *s.MinLength))
	}
	switch {
	case s.Minimum != nil && s.Maximum != nil:
		out = append(out, num(*s.Minimum)+" to "+num(*s.Maximum))
	case s.Maximum != nil:
		out = append(out, "at most "+num(*s.Maximum))
	case s.Minimum != nil:
		out = append(out, "at least "+num(*s.Minimum))
	}
	if s.ExclusiveMinimum != nil {
		out = append(out, "more than "+num(*s.ExclusiveMinimum))
	}
	if s.ExclusiveMaximum != nil {
		out = append(out, "less than "+num(*s.ExclusiveMaximum))
	}
	if s.MaxItems != nil {
		out = append(out, fmt.Sprintf("at most %d items", *s.MaxItems))
	}
	if s.MinItems != nil && *s.MinItems > 0 {
		out = append(out, fmt.Sprintf("at least %d items", *s.MinItems))
	}
	if s.Default != nil {
		out = append(out, fmt.Sprintf("default %v", s.Default))
	}
	switch s.Format {
	case "date-time":
		out = append(out, "RFC 3339 time, UTC")
	case "email", "uri":
		out = append(out, s.Format)
	}
	if s.ReadOnly {
		out = append(out, "read-only")
	}
	return strings.Join(out, "; ")
}

func fieldsOf(o *huma.OpenAPI, s *huma.Schema) []docField {
	r, _ := resolve(o, s)
	if r == nil {
		return nil
	}
	names := make([]string, 0, len(r.Properties))
	for n := range r.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []docField
	for _, n := range names {
		prop := r.Properties[n]
		out = append(out, docField{Name: n, Type: typeOf(o, prop), Description: prop.Description, Rules: rules(prop),
			Required: slices.Contains(r.Required, n)})
	}
	return out
}
