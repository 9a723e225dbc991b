package main

import (
	"bytes"
	"fmt"
	"strings"
)

var swiftKeywords = map[string]bool{"default": true, "protocol": true, "extension": true, "operator": true, "self": true,
	"Self": true, "Type": true, "in": true, "is": true, "as": true, "repeat": true, "where": true, "func": true, "var": true,
	"let": true, "class": true, "struct": true, "enum": true, "case": true, "import": true, "return": true, "public": true,
	"private": true, "internal": true, "static": true, "init": true, "deinit": true, "subscript": true, "typealias": true,
	"if": true, "else": true, "for": true, "while": true, "switch": true, "break": true, "continue": true, "guard": true,
	"defer": true, "do": true, "catch": true, "throw": true, "throws": true, "try": true, "nil": true, "true": true,
	"false": true, "super": true, "fallthrough": true, "inout": true, "associatedtype": true, "some": true, "any": true}

func swiftIdent(s string) string {
	v := camel(s)
	if swiftKeywords[v] {
		return "`" + v + "`"
	}
	return v
}

func swiftType(t *Type) string {
	switch t.Kind {
	case "string":
		return "String"
	case "integer":
		return "Int"
	case "number":
		return "Double"
	case "boolean":
		return "Bool"
	case "array":
		return "[" + swiftType(t.Elem) + "]"
	case "map":
		return "[String: " + swiftType(t.Elem) + "]"
	case "ref":
		return pascal(t.Ref)
	}
	return "JSONValue"
}

func swiftDoc(b *bytes.Buffer, indent, text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	for _, l := range strings.Split(text, "\n") {
		fmt.Fprintf(b, "%s/// %s\n", indent, strings.TrimRight(l, " "))
	}
}

func genSwift(api *API) (types, ops []byte) {
	var t bytes.Buffer
	fmt.Fprintf(&t, "// %s\n\nimport Foundation\n\n/// The version of the document these types were made from.\npublic let apiVersion = %q\n", genHeader, api.Version)
	for _, n := range api.ModelNames() {
		m := api.Models[n]
		name := pascal(n)
		t.WriteString("\n")
		swiftDoc(&t, "", m.Desc)
		fmt.Fprintf(&t, "public struct %s: Codable, Sendable {\n", name)
		var params, assigns, keys []string
		for _, f := range m.Fields {
			typ := swiftType(f.Type)
			opt := !f.Required || f.Type.Nullable
			if opt {
				typ += "?"
			}
			id := swiftIdent(f.JSON)
			swiftDoc(&t, "    ", f.Desc)
			fmt.Fprintf(&t, "    public var %s: %s\n", id, typ)
			if opt {
				params = append(params, fmt.Sprintf("%s: %s = nil", id, typ))
			} else {
				params = append(params, fmt.Sprintf("%s: %s", id, typ))
			}
			assigns = append(assigns, fmt.Sprintf("        self.%s = %s\n", strings.Trim(id, "`"), id))
			if camel(f.JSON) == f.JSON {
				keys = append(keys, fmt.Sprintf("        case %s\n", id))
			} else {
				keys = append(keys, fmt.Sprintf("        case %s = %q\n", id, f.JSON))
			}
		}
		fmt.Fprintf(&t, "\n    public init(%s) {\n%s    }\n", strings.Join(params, ", "), strings.Join(assigns, ""))
		if len(keys) > 0 {
			fmt.Fprintf(&t, "\n    enum CodingKeys: String, CodingKey {\n%s    }\n", strings.Join(keys, ""))
		}
		t.WriteString("}\n")
	}
	// Webhook events: one case per kind with its typed data.
	t.WriteString("\n/// The data of a webhook event, typed by its kind.\npublic enum WebhookEventData: Sendable {\n")
	for _, w := range api.Webhooks {
		fmt.Fprintf(&t, "    /// %s\n    case %s(%s)\n", w.Kind, swiftIdent(w.Kind), swiftType(w.Data))
	}
	t.WriteString("    /// A kind this version of the library does not know.\n    case unknown(String, JSONValue)\n\n")
	t.WriteString("    static func decode(kind: String, data: Data) throws -> WebhookEventData {\n        let decoder = JSONDecoder()\n        switch kind {\n")
	for _, w := range api.Webhooks {
		fmt.Fprintf(&t, "        case %q:\n            return .%s(try decoder.decode(%s.self, from: data))\n", w.Kind, swiftIdent(w.Kind), swiftType(w.Data))
	}
	t.WriteString("        default:\n            return .unknown(kind, try decoder.decode(JSONValue.self, from: data))\n        }\n    }\n}\n")

	var o bytes.Buffer
	fmt.Fprintf(&o, "// %s\n\nimport Foundation\n\n", genHeader)
	o.WriteString("/// operationId -> method name, for the coverage check.\npublic let operations: [String: String] = [\n")
	for _, op := range api.Ops {
		fmt.Fprintf(&o, "    %q: %q,\n", op.ID, camel(op.ID))
	}
	o.WriteString("]\n")
	for _, op := range api.Ops {
		genSwiftOp(&o, op)
	}
	return t.Bytes(), o.Bytes()
}

func genSwiftOp(o *bytes.Buffer, op *Op) {
	name := camel(op.ID)
	paramsType := pascal(op.ID) + "Params"
	if len(op.Query) > 0 {
		fmt.Fprintf(o, "\n/// The query and header parameters of %s.\npublic struct %s: Sendable {\n", name, paramsType)
		var inits, assigns, items []string
		for _, q := range op.Query {
			typ := swiftType(q.Type)
			required := q.Required
			if !required {
				typ += "?"
			}
			id := swiftIdent(q.Key)
			swiftDoc(o, "    ", q.Desc)
			fmt.Fprintf(o, "    public var %s: %s\n", id, typ)
			if required {
				inits = append(inits, fmt.Sprintf("%s: %s", id, typ))
			} else {
				inits = append(inits, fmt.Sprintf("%s: %s = nil", id, typ))
			}
			assigns = append(assigns, fmt.Sprintf("        self.%s = %s\n", strings.Trim(id, "`"), id))
			// Locals named so that no parameter (a property here) hides them.
			target := "encodedQuery"
			if q.In == "header" {
				target = "encodedHeaders"
			}
			items = append(items, fmt.Sprintf("        add(&%s, %q, %s)\n", target, q.Name, id))
		}
		fmt.Fprintf(o, "\n    public init(%s) {\n%s    }\n", strings.Join(inits, ", "), strings.Join(assigns, ""))
		fmt.Fprintf(o, "\n    func encode() -> (query: [URLQueryItem], headers: [String: String]) {\n        var encodedQuery: [URLQueryItem] = []\n        var encodedHeaders: [String: String] = [:]\n%s        return (encodedQuery, encodedHeaders)\n    }\n}\n", strings.Join(items, ""))
	}
	var args, callArgs []string
	var pathExpr strings.Builder
	rest := op.Path
	for _, p := range op.PathParams {
		i := strings.Index(rest, "{"+p.Name+"}")
		pathExpr.WriteString(rest[:i])
		fmt.Fprintf(&pathExpr, `\(escapePath(%s))`, swiftIdent(p.Name))
		rest = rest[i+len(p.Name)+2:]
		args = append(args, fmt.Sprintf("%s: String", swiftIdent(p.Name)))
		callArgs = append(callArgs, fmt.Sprintf("%s: %s", strings.Trim(swiftIdent(p.Name), "`"), swiftIdent(p.Name)))
	}
	pathExpr.WriteString(rest)
	path := `"` + pathExpr.String() + `"`
	body := "nil as Empty?"
	if op.Body != nil {
		args = append(args, "_ body: "+swiftType(op.Body))
		callArgs = append(callArgs, "body")
		body = "body"
	}
	queryExpr, headersExpr := "[]", "[:]"
	if len(op.Query) > 0 {
		def := ""
		if !hasRequired(op.Query) {
			def = " = .init()"
		}
		args = append(args, "_ params: "+paramsType+def)
		callArgs = append(callArgs, "params")
		queryExpr, headersExpr = "encoded.query", "encoded.headers"
	}
	summary := op.Summary
	if summary == "" {
		summary = op.ID
	}
	o.WriteString("\nextension Matchpoint {\n")
	swiftDoc(o, "    ", fmt.Sprintf("%s.\n\n%s %s (operationId %s).", strings.TrimSuffix(summary, "."), op.Method, op.Path, op.ID))
	prelude := ""
	if len(op.Query) > 0 {
		prelude = "        let encoded = params.encode()\n"
	}
	call := fmt.Sprintf("method: %q, path: %s, query: %s, headers: %s, body: %s, form: %v, auth: %v", op.Method, path, queryExpr, headersExpr, body, op.BodyForm, op.Auth)
	switch op.RespKind {
	case "redirect":
		fmt.Fprintf(o, "    public func %s(%s) -> URL {\n%s        return url(path: %s, query: %s)\n    }\n", name, strings.Join(args, ", "), prelude, path, queryExpr)
	case "json":
		fmt.Fprintf(o, "    public func %s(%s) async throws -> %s {\n%s        return try await request(%s)\n    }\n", name, strings.Join(args, ", "), swiftType(op.Resp), prelude, call)
	case "text":
		fmt.Fprintf(o, "    public func %s(%s) async throws -> String {\n%s        let (data, _) = try await send(%s)\n        return String(decoding: data, as: UTF8.self)\n    }\n", name, strings.Join(args, ", "), prelude, call)
	case "stream":
		swiftDoc(o, "    ", "Returns the open event stream's bytes (server-sent events).")
		fmt.Fprintf(o, "    public func %s(%s) async throws -> URLSession.AsyncBytes {\n%s        return try await stream(%s)\n    }\n", name, strings.Join(args, ", "), prelude, call)
	default:
		fmt.Fprintf(o, "    public func %s(%s) async throws {\n%s        _ = try await send(%s)\n    }\n", name, strings.Join(args, ", "), prelude, call)
	}
	if op.ListItem != nil {
		item := swiftType(op.ListItem)
		swiftDoc(o, "    ", fmt.Sprintf("Every item of %s, page after page (follows next_cursor).", name))
		setCursor := "params.cursor = next"
		copyLine := "                    var params = params\n"
		if op.CursorInBody {
			setCursor = "body.cursor = next"
			copyLine = "                    var body = body\n"
		}
		fmt.Fprintf(o, "    public func %sAutoPaging(%s) -> AsyncThrowingStream<%s, Error> {\n        AsyncThrowingStream { continuation in\n            let task = Task {\n                do {\n%s                    while true {\n                        let page = try await self.%s(%s)\n                        for item in page.data ?? [] {\n                            continuation.yield(item)\n                        }\n                        guard page.hasMore, let next = page.nextCursor, !next.isEmpty else { break }\n                        %s\n                    }\n                    continuation.finish()\n                } catch {\n                    continuation.finish(throwing: error)\n                }\n            }\n            continuation.onTermination = { _ in task.cancel() }\n        }\n    }\n",
			name, strings.Join(args, ", "), item, copyLine, name, strings.Join(swiftCallArgs(op), ", "), setCursor)
	}
	o.WriteString("}\n")
}

// swiftCallArgs are the arguments to call an operation's method again.
func swiftCallArgs(op *Op) []string {
	var out []string
	for _, p := range op.PathParams {
		out = append(out, fmt.Sprintf("%s: %s", strings.Trim(swiftIdent(p.Name), "`"), swiftIdent(p.Name)))
	}
	if op.Body != nil {
		out = append(out, "body")
	}
	if len(op.Query) > 0 {
		out = append(out, "params")
	}
	return out
}

func hasRequired(ps []Param) bool {
	for _, p := range ps {
		if p.Required {
			return true
		}
	}
	return false
}
