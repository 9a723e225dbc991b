package httpapi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// emittedCodes reads every error code the service's source can emit: the
// code arguments of apperr's constructors, Code fields of apperr.Error and
// Problem literals, the codes problems builds itself, and NotFoundf's.
func emittedCodes(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{} // code -> where
	lit := func(e ast.Expr) (string, bool) {
		b, ok := e.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(b.Value)
		return s, err == nil
	}
	fset := token.NewFileSet()
	for _, root := range []string{"..", "../../cmd"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			add := func(e ast.Expr) {
				if s, ok := lit(e); ok {
					out[s] = fset.Position(e.Pos()).String()
				}
			}
			inApperr := f.Name.Name == "apperr"
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					var name string
					switch fn := n.Fun.(type) {
					case *ast.SelectorExpr:
						name = fn.Sel.Name
					case *ast.Ident:
						if inApperr {
							name = fn.Name
						}
					}
					switch {
					case name == "InvalidParam" && len(n.Args) > 1:
						add(n.Args[1])
					case (name == "Conflictf" || name == "Forbiddenf") && len(n.Args) > 0:
						add(n.Args[0])
					case name == "NotFoundf":
						out["not_found"] = fset.Position(n.Pos()).String()
					case name == "new" && len(n.Args) > 2 && f.Name.Name == "httpapi":
						add(n.Args[2])
					}
				case *ast.CompositeLit:
					typ := ""
					switch tt := n.Type.(type) {
					case *ast.SelectorExpr:
						if x, ok := tt.X.(*ast.Ident); ok {
							typ = x.Name + "." + tt.Sel.Name
						}
					case *ast.Ident:
						typ = f.Name.Name + "." + tt.Name
					}
					if typ != "apperr.Error" && typ != "httpapi.Problem" {
						return true
					}
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Code" {
								add(kv.Value)
							}
						}
					}
				case *ast.AssignStmt:
					if len(n.Lhs) >= 1 && len(n.Rhs) >= 1 && f.Name.Name == "httpapi" {
						if id, ok := n.Lhs[0].(*ast.Ident); ok && id.Name == "code" {
							add(n.Rhs[0])
						}
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestErrorReferenceMatchesCode fails when the service can emit a code the
// error reference at /docs/errors does not list, or lists one it never emits.
func TestErrorReferenceMatchesCode(t *testing.T) {
	emitted := emittedCodes(t)
	if len(emitted) < 30 {
		t.Fatalf("found only %d codes: the source scan is broken", len(emitted))
	}
	var documented []string
	for _, c := range problemCodes {
		documented = append(documented, c.Code)
	}
	for code, where := range emitted {
		if !slices.Contains(documented, code) {
			t.Errorf("%s emits %q, which /docs/errors does not list (add it to problemCodes in docs.go)", where, code)
		}
	}
	for _, code := range documented {
		if _, ok := emitted[code]; !ok {
			t.Errorf("/docs/errors lists %q, which nothing emits", code)
		}
	}
}
