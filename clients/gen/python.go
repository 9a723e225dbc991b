package main

import (
	"bytes"
	"fmt"
	"strings"
)

var pyKeywords = map[string]bool{"from": true, "in": true, "is": true, "not": true, "and": true, "or": true, "def": true,
	"class": true, "return": true, "import": true, "global": true, "lambda": true, "with": true, "as": true, "pass": true,
	"yield": true, "async": true, "await": true, "for": true, "while": true, "if": true, "else": true, "elif": true,
	"try": true, "except": true, "finally": true, "raise": true, "del": true, "None": true, "True": true, "False": true,
	"continue": true, "break": true, "assert": true, "nonlocal": true, "self": true}

func pyIdent(s string) string {
	v := snake(s)
	if pyKeywords[v] {
		v += "_"
	}
	return v
}

func pyType(t *Type) string {
	switch t.Kind {
	case "string":
		return "str"
	case "integer":
		return "int"
	case "number":
		return "float"
	case "boolean":
		return "bool"
	case "array":
		return "List[" + pyType(t.Elem) + "]"
	case "map":
		return "Dict[str, " + pyType(t.Elem) + "]"
	case "ref":
		return pascal(t.Ref)
	}
	return "Any"
}

// pySpec is how _types.decode converts a JSON value to t: None for plain
// values, a class, or ("list", spec) / ("map", spec).
func pySpec(t *Type) string {
	switch t.Kind {
	case "array":
		return `("list", ` + pySpec(t.Elem) + `)`
	case "map":
		return `("map", ` + pySpec(t.Elem) + `)`
	case "ref":
		return pascal(t.Ref)
	}
	return "None"
}

func pyDoc(b *bytes.Buffer, indent, text string) {
	text = strings.TrimSpace(strings.ReplaceAll(text, `"""`, `'''`))
	text = strings.ReplaceAll(text, `\`, `\\`)
	if text == "" {
		return
	}
	lines := strings.Split(text, "\n")
	fmt.Fprintf(b, "%s\"\"\"%s", indent, lines[0])
	for _, l := range lines[1:] {
		if l == "" {
			b.WriteString("\n")
		} else {
			fmt.Fprintf(b, "\n%s%s", indent, l)
		}
	}
	if len(lines) > 1 {
		fmt.Fprintf(b, "\n%s", indent)
	}
	b.WriteString("\"\"\"\n")
}

func genPython(api *API) (types, ops []byte) {
	var t bytes.Buffer
	fmt.Fprintf(&t, "# %s\n\"\"\"The API's types, one dataclass per object of the OpenAPI document.\"\"\"\n\n", genHeader)
	t.WriteString("from __future__ import annotations\n\nfrom dataclasses import dataclass, field\nfrom typing import Any, ClassVar, Dict, List, Optional\n\n")
	fmt.Fprintf(&t, "API_VERSION = %q\n\n", api.Version)
	t.WriteString(`

def decode(spec: Any, value: Any) -> Any:
    """Converts a JSON value to the type spec names (see _FIELDS)."""
    if value is None or spec is None:
        return value
    if isinstance(spec, tuple):
        kind, inner = spec
        if kind == "list":
            return [decode(inner, v) for v in value]
        return {k: decode(inner, v) for k, v in value.items()}
    if not isinstance(value, dict):
        return value
    kwargs = {}
    for name, (attr, inner) in spec._FIELDS.items():
        kwargs[attr] = decode(inner, value.get(name))
    out = spec(**kwargs)
    # Fields this version of the library does not know stay readable.
    out._extra = {k: v for k, v in value.items() if k not in spec._FIELDS}
    return out


class Model:
    """Base of the API's objects: dataclasses whose fields are the JSON
    properties; to_dict() gives the JSON object back (unset fields left out)."""

    _FIELDS: ClassVar[Dict[str, Any]] = {}

    def to_dict(self) -> Dict[str, Any]:
        return encode(self)


def encode(value: Any) -> Any:
    """The JSON value of a model, list or dict; None fields of models are left out."""
    if isinstance(value, Model):
        out = {}
        for name, (attr, _) in value._FIELDS.items():
            v = getattr(value, attr)
            if v is not None:
                out[name] = encode(v)
        return out
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    return value

`)
	for _, n := range api.ModelNames() {
		m := api.Models[n]
		fmt.Fprintf(&t, "\n@dataclass\nclass %s(Model):\n", pascal(n))
		pyDoc(&t, "    ", m.Desc)
		// Required fields first: dataclass fields with defaults come last.
		var fields []Field
		for _, f := range m.Fields {
			if f.Required {
				fields = append(fields, f)
			}
		}
		for _, f := range m.Fields {
			if !f.Required {
				fields = append(fields, f)
			}
		}
		if len(fields) == 0 {
			t.WriteString("    pass\n")
		}
		for _, f := range fields {
			typ := pyType(f.Type)
			if f.Type.Nullable || !f.Required {
				typ = "Optional[" + typ + "]"
			}
			if f.Required {
				fmt.Fprintf(&t, "    %s: %s\n", pyIdent(f.JSON), typ)
			} else {
				fmt.Fprintf(&t, "    %s: %s = None\n", pyIdent(f.JSON), typ)
			}
			if d := strings.TrimSpace(f.Desc); d != "" {
				fmt.Fprintf(&t, "    # %s\n", strings.ReplaceAll(d, "\n", "\n    # "))
			}
		}
		t.WriteString("    _extra: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)\n")
	}
	t.WriteString("\n\n# The JSON name, attribute and type of every field, read by decode and encode.\n")
	for _, n := range api.ModelNames() {
		m := api.Models[n]
		var parts []string
		for _, f := range m.Fields {
			parts = append(parts, fmt.Sprintf("%q: (%q, %s)", f.JSON, pyIdent(f.JSON), pySpec(f.Type)))
		}
		fmt.Fprintf(&t, "%s._FIELDS = {%s}\n", pascal(n), strings.Join(parts, ", "))
	}
	t.WriteString("\n# The type of each webhook event kind's data.\nEVENT_DATA = {\n")
	for _, w := range api.Webhooks {
		fmt.Fprintf(&t, "    %q: %s,\n", w.Kind, pySpec(w.Data))
	}
	t.WriteString("}\n\n__all__ = [\"decode\", \"encode\", \"Model\", \"EVENT_DATA\", \"API_VERSION\"")
	for _, n := range api.ModelNames() {
		fmt.Fprintf(&t, ", %q", pascal(n))
	}
	t.WriteString("]\n")

	var o bytes.Buffer
	fmt.Fprintf(&o, "# %s\n\"\"\"One method per operation of the API.\"\"\"\n\n", genHeader)
	o.WriteString("from __future__ import annotations\n\nfrom typing import Any, Dict, Iterator, List, Optional, Union\nfrom urllib.parse import quote\n\nfrom ._types import *  # noqa: F401,F403\nfrom ._types import __all__ as _all_types  # noqa: F401\n\n\n")
	o.WriteString("class NotGiven:\n    \"\"\"The default of optional arguments: the field is not sent (None sends null).\"\"\"\n\n    def __repr__(self) -> str:\n        return \"NOT_GIVEN\"\n\n    def __bool__(self) -> bool:\n        return False\n\n\nNOT_GIVEN: Any = NotGiven()\n\n\n")
	o.WriteString("def _given(pairs: Dict[str, Any]) -> Dict[str, Any]:\n    return {k: v for k, v in pairs.items() if not isinstance(v, NotGiven)}\n\n\n")
	o.WriteString("# operationId -> method name, for the coverage test.\nOPERATIONS = {\n")
	for _, op := range api.Ops {
		fmt.Fprintf(&o, "    %q: %q,\n", op.ID, pyIdent(op.ID))
	}
	o.WriteString("}\n\n\nclass Operations:\n    \"\"\"The API's operations; Client adds the transport (_request).\"\"\"\n")
	for _, op := range api.Ops {
		genPyOp(&o, api, op)
	}
	return t.Bytes(), o.Bytes()
}

func genPyOp(o *bytes.Buffer, api *API, op *Op) {
	name := pyIdent(op.ID)
	var sig []string
	sig = append(sig, "self")
	var pathExpr strings.Builder
	rest := op.Path
	for _, p := range op.PathParams {
		i := strings.Index(rest, "{"+p.Name+"}")
		pathExpr.WriteString(rest[:i])
		fmt.Fprintf(&pathExpr, "{quote(%s, safe='')}", pyIdent(p.Name))
		rest = rest[i+len(p.Name)+2:]
		sig = append(sig, pyIdent(p.Name)+": str")
	}
	pathExpr.WriteString(rest)
	path := `"` + pathExpr.String() + `"`
	if len(op.PathParams) > 0 {
		path = "f" + path
	}
	sig = append(sig, "*")
	var bodyPairs, queryPairs, headerPairs, argNames []string
	for _, p := range op.PathParams {
		argNames = append(argNames, pyIdent(p.Name))
	}
	var required, optional []string
	if op.Body != nil && op.Body.Kind == "ref" {
		for _, f := range api.Models[op.Body.Ref].Fields {
			id := pyIdent(f.JSON)
			typ := pyType(f.Type)
			if f.Type.Nullable {
				typ = "Optional[" + typ + "]"
			}
			if f.Required {
				required = append(required, fmt.Sprintf("%s: %s", id, typ))
			} else {
				optional = append(optional, fmt.Sprintf("%s: %s = NOT_GIVEN", id, typ))
			}
			bodyPairs = append(bodyPairs, fmt.Sprintf("%q: %s", f.JSON, id))
			argNames = append(argNames, id)
		}
	}
	for _, q := range op.Query {
		id := pyIdent(q.Key)
		typ := pyType(q.Type)
		if q.Required {
			required = append(required, fmt.Sprintf("%s: %s", id, typ))
		} else {
			optional = append(optional, fmt.Sprintf("%s: %s = NOT_GIVEN", id, typ))
		}
		pair := fmt.Sprintf("%q: %s", q.Name, id)
		if q.In == "header" {
			headerPairs = append(headerPairs, pair)
		} else {
			queryPairs = append(queryPairs, pair)
		}
		argNames = append(argNames, id)
	}
	sig = append(sig, required...)
	sig = append(sig, optional...)
	sig = append(sig, "request_options: Optional[Dict[str, Any]] = None")
	ret := "None"
	cast := "None"
	switch op.RespKind {
	case "json":
		ret, cast = pyType(op.Resp), pySpec(op.Resp)
	case "text":
		ret, cast = "str", `"text"`
	case "stream":
		ret, cast = "Any", `"stream"`
	case "redirect":
		ret = "str"
	}
	fmt.Fprintf(o, "\n    def %s(%s) -> %s:\n", name, strings.Join(sig, ", "), ret)
	summary := op.Summary
	if summary == "" {
		summary = op.ID
	}
	doc := fmt.Sprintf("%s.\n\n%s %s (operationId %s).", strings.TrimSuffix(summary, "."), op.Method, op.Path, op.ID)
	if op.RespKind == "stream" {
		doc += "\n\nReturns the open HTTP response (server-sent events): read it and close it."
	}
	if op.RespKind == "redirect" {
		doc += "\n\nA page for the person's browser: returns its address (see authorize_url for PKCE)."
	}
	pyDoc(o, "        ", doc)
	query := "None"
	if len(queryPairs) > 0 {
		query = "_given({" + strings.Join(queryPairs, ", ") + "})"
	}
	if op.RespKind == "redirect" {
		fmt.Fprintf(o, "        return self._url(%s, %s)\n", path, query)
		return
	}
	body := "None"
	if op.Body != nil {
		body = "_given({" + strings.Join(bodyPairs, ", ") + "})"
	}
	headers := "None"
	if len(headerPairs) > 0 {
		headers = "_given({" + strings.Join(headerPairs, ", ") + "})"
	}
	fmt.Fprintf(o, "        return self._request(%q, %s, query=%s, body=%s, headers=%s, form=%v, auth=%v, cast=%s, request_options=request_options)\n",
		op.Method, path, query, body, headers, pyBool(op.BodyForm), pyBool(op.Auth), cast)
	if op.ListItem == nil {
		return
	}
	fmt.Fprintf(o, "\n    def %s_iter(%s) -> Iterator[%s]:\n", name, strings.Join(sig, ", "), pyType(op.ListItem))
	pyDoc(o, "        ", fmt.Sprintf("Every item of %s, page after page (follows next_cursor).", name))
	var kw []string
	for _, a := range argNames {
		kw = append(kw, fmt.Sprintf("%q: %s", a, a))
	}
	kw = append(kw, `"request_options": request_options`)
	fmt.Fprintf(o, "        return self._auto_page(self.%s, {%s})\n", name, strings.Join(kw, ", "))
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
