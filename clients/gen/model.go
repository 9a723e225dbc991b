package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// The document is read once into this small model of what the libraries
// need: named object types, and operations with their parameters, body and
// answer. Every language's writer works from it, so the libraries cannot
// disagree on what the API is.

// Type is the type of a field, parameter, body or answer.
type Type struct {
	Kind     string // string, integer, number, boolean, any, array, map, ref
	Format   string // date-time, ...
	Elem     *Type  // array and map
	Ref      string // ref: a Model's name
	Nullable bool
}

// Field is one property of a Model.
type Field struct {
	JSON     string
	Type     *Type
	Required bool
	Desc     string
}

// Model is a named object type: a component schema, or an object schema
// written inline in the document and named after where it appears.
type Model struct {
	Name   string
	Desc   string
	Fields []Field
	Input  bool // reachable from a request body: optional fields can be left unset
}

// Param is a path, query or header parameter.
type Param struct {
	Name     string // on the wire
	Key      string // in the libraries: Name, or Name + "-header" for a header that another parameter shares a name with
	In       string
	Type     *Type
	Required bool
	Desc     string
}

// Op is one operation.
type Op struct {
	ID, Method, Path, Summary string
	PathParams                []Param
	Query                     []Param // query and header parameters
	Body                      *Type   // a ref, or nil
	BodyForm                  bool    // application/x-www-form-urlencoded
	Resp                      *Type   // nil: no content
	RespKind                  string  // json, none, text, stream, redirect
	Auth                      bool    // needs a credential
	// ListItem is set on list operations: the answer has data and
	// next_cursor, and the request takes a cursor (query or body field).
	ListItem     *Type
	CursorInBody bool
}

// Webhook is one kind of event delivered to webhook subscriptions.
type Webhook struct {
	Kind string // match.accepted
	Data *Type  // the envelope's data
}

// API is the whole document.
type API struct {
	Version  string
	Models   map[string]*Model
	Ops      []*Op
	Webhooks []Webhook
}

type schema = map[string]any

type builder struct {
	doc     schema
	api     *API
	pending map[string]schema // components not yet converted
	shapes  map[string]string // inline schema JSON -> model name given to it
}

func load(raw []byte) (*API, error) {
	var doc schema
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	b := &builder{doc: doc, api: &API{Models: map[string]*Model{}}, pending: map[string]schema{}, shapes: map[string]string{}}
	if info, ok := doc["info"].(schema); ok {
		b.api.Version, _ = info["version"].(string)
	}
	comps, _ := doc["components"].(schema)
	schemas, _ := comps["schemas"].(schema)
	names := sortedKeys(schemas)
	for _, n := range names {
		b.pending[n] = schemas[n].(schema)
	}
	for _, n := range names {
		b.component(n)
	}
	paths, _ := doc["paths"].(schema)
	for _, p := range sortedKeys(paths) {
		item := paths[p].(schema)
		for _, m := range []string{"get", "post", "put", "patch", "delete"} {
			raw, ok := item[m].(schema)
			if !ok {
				continue
			}
			op, err := b.op(p, strings.ToUpper(m), raw)
			if err != nil {
				return nil, err
			}
			b.api.Ops = append(b.api.Ops, op)
		}
	}
	sort.Slice(b.api.Ops, func(i, j int) bool { return b.api.Ops[i].ID < b.api.Ops[j].ID })
	hooks, _ := doc["webhooks"].(schema)
	for _, k := range sortedKeys(hooks) {
		post, _ := hooks[k].(schema)["post"].(schema)
		body, _ := dig(post, "requestBody", "content", "application/json", "schema").(schema)
		data, _ := dig(body, "properties", "data").(schema)
		if data == nil {
			continue
		}
		b.api.Webhooks = append(b.api.Webhooks, Webhook{Kind: k, Data: b.typ(data, pascal(k)+"EventData")})
	}
	for _, op := range b.api.Ops {
		if op.Body != nil {
			b.markInput(op.Body, map[string]bool{})
		}
	}
	return b.api, nil
}

func (b *builder) component(name string) {
	s, ok := b.pending[name]
	if !ok {
		return
	}
	delete(b.pending, name)
	b.model(name, s)
}

func (b *builder) model(name string, s schema) *Model {
	m := &Model{Name: name, Desc: str(s["description"])}
	b.api.Models[name] = m
	props, _ := s["properties"].(schema)
	req := map[string]bool{}
	if r, ok := s["required"].([]any); ok {
		for _, x := range r {
			req[x.(string)] = true
		}
	}
	for _, k := range sortedKeys(props) {
		ps := props[k].(schema)
		m.Fields = append(m.Fields, Field{JSON: k, Type: b.typ(ps, name+pascal(k)), Required: req[k], Desc: str(ps["description"])})
	}
	return m
}

// typ converts a schema; inline objects become models named hint.
func (b *builder) typ(s schema, hint string) *Type {
	if ref, ok := s["$ref"].(string); ok {
		name := ref[strings.LastIndex(ref, "/")+1:]
		b.component(name)
		return &Type{Kind: "ref", Ref: name}
	}
	t := &Type{}
	kind := ""
	switch v := s["type"].(type) {
	case string:
		kind = v
	case []any:
		for _, x := range v {
			if x == "null" {
				t.Nullable = true
			} else {
				kind = x.(string)
			}
		}
	}
	t.Format = str(s["format"])
	switch kind {
	case "string", "integer", "number", "boolean":
		t.Kind = kind
	case "array":
		t.Kind = "array"
		items, _ := s["items"].(schema)
		if items == nil {
			items = schema{}
		}
		t.Elem = b.typ(items, hint+"Item")
	case "object":
		props, _ := s["properties"].(schema)
		if len(props) > 0 {
			raw, _ := json.Marshal(s)
			name, seen := b.shapes[string(raw)]
			if !seen {
				name = hint
				for i := 2; b.api.Models[name] != nil || b.pending[name] != nil; i++ {
					name = fmt.Sprintf("%s%d", hint, i)
				}
				b.shapes[string(raw)] = name
				b.model(name, s)
			}
			t.Kind, t.Ref = "ref", name
			return t
		}
		if ap, ok := s["additionalProperties"].(schema); ok {
			t.Kind = "map"
			t.Elem = b.typ(ap, hint+"Value")
			return t
		}
		t.Kind = "map"
		t.Elem = &Type{Kind: "any"}
	default:
		t.Kind = "any"
	}
	return t
}

func (b *builder) op(path, method string, s schema) (*Op, error) {
	id := str(s["operationId"])
	if id == "" {
		return nil, fmt.Errorf("%s %s has no operationId", method, path)
	}
	op := &Op{ID: id, Method: method, Path: path, Summary: str(s["summary"])}
	if sec, ok := s["security"].([]any); ok && len(sec) > 0 {
		op.Auth = true
	}
	params, _ := s["parameters"].([]any)
	for _, x := range params {
		p := x.(schema)
		ps, _ := p["schema"].(schema)
		if ps == nil {
			ps = schema{"type": "string"}
		}
		prm := Param{Name: str(p["name"]), In: str(p["in"]), Type: b.typ(ps, pascal(id)+pascal(str(p["name"]))), Required: p["required"] == true, Desc: str(p["description"])}
		if prm.In == "path" {
			op.PathParams = append(op.PathParams, prm)
		} else {
			op.Query = append(op.Query, prm)
		}
	}
	// A header may share its name with a query parameter (Last-Event-ID and
	// last_event_id): the header's argument is suffixed.
	taken := map[string]bool{}
	for _, p := range append(append([]Param(nil), op.PathParams...), op.Query...) {
		if p.In != "header" {
			taken[snake(p.Name)] = true
		}
	}
	for i, q := range op.Query {
		op.Query[i].Key = q.Name
		if q.In == "header" && taken[snake(q.Name)] {
			op.Query[i].Key = q.Name + "-header"
		}
	}
	// Path parameters in the order the path names them.
	sort.SliceStable(op.PathParams, func(i, j int) bool {
		return strings.Index(path, "{"+op.PathParams[i].Name+"}") < strings.Index(path, "{"+op.PathParams[j].Name+"}")
	})
	if content, ok := dig(s, "requestBody", "content").(schema); ok {
		for _, ct := range sortedKeys(content) {
			bs, _ := content[ct].(schema)["schema"].(schema)
			op.Body = b.typ(bs, pascal(id)+"Request")
			op.BodyForm = ct == "application/x-www-form-urlencoded"
			break
		}
	}
	resps, _ := s["responses"].(schema)
	op.RespKind = "none"
	for _, code := range sortedKeys(resps) {
		if code == "302" {
			op.RespKind = "redirect"
			break
		}
		if !strings.HasPrefix(code, "2") {
			continue
		}
		content, _ := resps[code].(schema)["content"].(schema)
		for _, ct := range sortedKeys(content) {
			rs, _ := content[ct].(schema)["schema"].(schema)
			switch {
			case ct == "text/event-stream":
				op.RespKind = "stream"
			case rs["type"] == "string":
				op.RespKind = "text"
			default:
				op.RespKind = "json"
				op.Resp = b.typ(rs, pascal(id)+"Response")
			}
			break
		}
		break
	}
	// Python takes path, query and header parameters and body fields as
	// arguments of one method: their names must differ.
	args := map[string]string{}
	claim := func(name, what string) error {
		if prev, ok := args[snake(name)]; ok {
			return fmt.Errorf("%s: %s and %s would be the same argument %q", id, prev, what, snake(name))
		}
		args[snake(name)] = what
		return nil
	}
	for _, p := range op.PathParams {
		if err := claim(p.Name, "path parameter "+p.Name); err != nil {
			return nil, err
		}
	}
	for _, q := range op.Query {
		if err := claim(q.Key, q.In+" parameter "+q.Name); err != nil {
			return nil, err
		}
	}
	if op.Body != nil && op.Body.Kind == "ref" {
		for _, f := range b.api.Models[op.Body.Ref].Fields {
			if err := claim(f.JSON, "body field "+f.JSON); err != nil {
				return nil, err
			}
		}
	}
	// A list: the answer has data and next_cursor, and a cursor goes in.
	if op.Resp != nil && op.Resp.Kind == "ref" {
		m := b.api.Models[op.Resp.Ref]
		var data *Type
		hasNext := false
		for _, f := range m.Fields {
			if f.JSON == "data" && f.Type.Kind == "array" {
				data = f.Type.Elem
			}
			hasNext = hasNext || f.JSON == "next_cursor"
		}
		cursorQuery := false
		for _, q := range op.Query {
			cursorQuery = cursorQuery || q.Name == "cursor"
		}
		cursorBody := false
		if op.Body != nil && op.Body.Kind == "ref" {
			for _, f := range b.api.Models[op.Body.Ref].Fields {
				cursorBody = cursorBody || f.JSON == "cursor"
			}
		}
		if data != nil && hasNext && (cursorQuery || cursorBody) {
			op.ListItem = data
			op.CursorInBody = !cursorQuery
		}
	}
	return op, nil
}

func (b *builder) markInput(t *Type, seen map[string]bool) {
	switch t.Kind {
	case "array", "map":
		b.markInput(t.Elem, seen)
	case "ref":
		if seen[t.Ref] {
			return
		}
		seen[t.Ref] = true
		m := b.api.Models[t.Ref]
		m.Input = true
		for _, f := range m.Fields {
			b.markInput(f.Type, seen)
		}
	}
}

// ModelNames returns the models' names in order.
func (a *API) ModelNames() []string {
	var out []string
	for n := range a.Models {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func dig(s schema, keys ...string) any {
	var cur any = s
	for _, k := range keys {
		m, ok := cur.(schema)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

func sortedKeys(m schema) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func str(v any) string { s, _ := v.(string); return s }

// words splits "get-me", "list_webhook.deliveries", "APIKey" into words.
func words(s string) []string {
	var out []string
	cur := []rune{}
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && len(cur) > 0 && (unicode.IsLower(cur[len(cur)-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// initialisms are written in capitals in Go names.
var initialisms = map[string]bool{"id": true, "url": true, "api": true, "ip": true, "http": true, "https": true, "json": true,
	"rsvp": true, "uri": true, "vapid": true, "ms": true, "cidrs": false, "ids": false}

func pascal(s string) string {
	var b strings.Builder
	for _, w := range words(s) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

func camel(s string) string {
	p := pascal(s)
	if p == "" {
		return p
	}
	ws := words(s)
	return strings.ToLower(ws[0]) + p[len(ws[0]):]
}

func snake(s string) string {
	ws := words(s)
	for i := range ws {
		ws[i] = strings.ToLower(ws[i])
	}
	return strings.Join(ws, "_")
}

// goName is PascalCase with Go's initialisms (user_id -> UserID).
func goName(s string) string {
	var b strings.Builder
	for _, w := range words(s) {
		lw := strings.ToLower(w)
		switch {
		case initialisms[lw]:
			b.WriteString(strings.ToUpper(lw))
		case lw == "ids":
			b.WriteString("IDs")
		case lw == "oauth":
			b.WriteString("OAuth")
		default:
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}
