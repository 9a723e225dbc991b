package web

import (
	"net/http"
	"slices"
	"sort"
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

// ErrorReference serves /docs/errors; every error_uri and problem type
// points at an anchor on it.
func (p *Pages) ErrorReference(d ErrorReferenceData) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.render(w, r, http.StatusOK, "errors", map[string]any{"Title": "Error reference", "OAuth": d.OAuth, "API": d.API})
	})
}

type docField struct {
	Name, Type, Description string
	Required                bool
}

type docOperation struct {
	ID, Method, Path, Summary, Description string
	Scopes                                 []string
	Params                                 []docField
	Body                                   []docField
	BodyType                               string
	Responses                              []docField
}

type docSection struct {
	Tag        string
	Operations []docOperation
}

// APIReference serves /docs: a readable reference built from the OpenAPI
// document on the server, so it needs no script and no CDN.
func (p *Pages) APIReference(o *huma.OpenAPI) http.Handler {
	// Built once, on first request: the OpenAPI document is complete only
	// after every route is registered.
	sections := sync.OnceValue(func() []docSection { return buildReference(o) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.render(w, r, http.StatusOK, "apidocs", map[string]any{
			"Title": "API reference", "Info": o.Info, "Sections": sections(), "Server": serverURL(o),
		})
	})
}

func serverURL(o *huma.OpenAPI) string {
	if len(o.Servers) > 0 {
		return o.Servers[0].URL
	}
	return ""
}

func buildReference(o *huma.OpenAPI) []docSection {
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
					Description: describe(prm.Description, prm.Schema), Required: prm.Required})
			}
			if op.RequestBody != nil {
				for ct, mt := range op.RequestBody.Content {
					d.BodyType = ct
					d.Body = fieldsOf(o, mt.Schema)
				}
			}
			codes := make([]string, 0, len(op.Responses))
			for code := range op.Responses {
				codes = append(codes, code)
			}
			sort.Strings(codes)
			for _, code := range codes {
				resp := op.Responses[code]
				typ := ""
				for _, mt := range resp.Content {
					typ = typeOf(o, mt.Schema)
				}
				d.Responses = append(d.Responses, docField{Name: code, Type: typ, Description: resp.Description})
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
	out := make([]docSection, 0, len(tags))
	for _, t := range tags {
		out = append(out, docSection{Tag: t, Operations: byTag[t]})
	}
	return out
}

func resolve(o *huma.OpenAPI, s *huma.Schema) (*huma.Schema, string) {
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

func typeOf(o *huma.OpenAPI, s *huma.Schema) string {
	r, name := resolve(o, s)
	if name != "" {
		return name
	}
	if r == nil {
		return ""
	}
	switch r.Type {
	case "array":
		return "array of " + typeOf(o, r.Items)
	case "":
		return "any"
	}
	if len(r.Enum) > 0 {
		var vals []string
		for _, v := range r.Enum {
			if s, ok := v.(string); ok {
				vals = append(vals, s)
			}
		}
		return r.Type + ": " + strings.Join(vals, " | ")
	}
	if r.Nullable {
		return r.Type + " or null"
	}
	return r.Type
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
		out = append(out, docField{Name: n, Type: typeOf(o, prop), Description: prop.Description, Required: slices.Contains(r.Required, n)})
	}
	return out
}
