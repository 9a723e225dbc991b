package store

import (
	"context"
	"database/sql/driver"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// The SQLite driver prepares (SQLite parses and plans) a statement on every
// call made through a transaction or a connection, and finalizes it after:
// DB.prepared keeps statements for calls on the pool only. Every write
// goes through a transaction, so a message sent, say, parsed some twenty
// statements each time, about 40% of its CPU. stmtConn keeps each
// connection's statements prepared, by query text, and runs the calls made
// on it with them.

// A LIMIT given as a bare parameter ("LIMIT $3") makes SQLite plan the
// statement again every time it runs: SQLite reads the bound value to plan
// with it, and so marks the statement to be prepared anew whenever that
// parameter is bound again, which every call does. A list, a page of
// messages or a search parsed and planned its whole statement on each
// call. Every statement is therefore given to SQLite with such a LIMIT
// read through CAST, which SQLite evaluates when it runs (the same rows;
// the plans here depend on the shape of a query, not on its values).
var bareLimit = regexp.MustCompile(`(?i)\bLIMIT\s+(\$\d+|\?\d*)`)

// sqliteText is query as SQLite is given it (bareLimit, positional).
func sqliteText(query string) string {
	if strings.Contains(strings.ToUpper(query), "LIMIT") {
		query = bareLimit.ReplaceAllString(query, "LIMIT CAST($1 AS INTEGER)")
	}
	return positional(query)
}

// positional writes the parameters of query as plain "?" when they are
// $1, $2 ... $n, each once and in that order (outside quotes and
// comments), and leaves query as it is otherwise. The driver asks SQLite
// the name of each parameter it binds, and SQLite finds a numbered one's
// name by walking the list of all of them: binding was quadratic in their
// number, milliseconds for the thousands a batch's rows take in one insert
// (a group's notifications and stream rows). Plain ones have no name.
func positional(query string) string {
	if !strings.Contains(query, "$") {
		return query
	}
	var b strings.Builder
	next := 1
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '\'' || c == '"': // a literal or a quoted name, its quote doubled inside
			j := i + 1
			for j < len(query) && (query[j] != c || (j+1 < len(query) && query[j+1] == c)) {
				if query[j] == c {
					j++
				}
				j++
			}
			b.WriteString(query[i:min(j+1, len(query))])
			i = j + 1
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = len(query) - i
			}
			b.WriteString(query[i : i+j])
			i += j
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			j := strings.Index(query[i+2:], "*/")
			if j < 0 {
				return query
			}
			b.WriteString(query[i : i+2+j+2])
			i += 2 + j + 2
		case c == '$':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			if j == i+1 || query[i+1:j] != strconv.Itoa(next) {
				return query
			}
			next++
			b.WriteByte('?')
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// maxConnStmts bounds the statements a connection keeps. The queries are
// the package's fixed texts, a few hundred at most; a text built per call
// (a list of n placeholders) takes a place too, so a full cache evicts one.
const maxConnStmts = 512

// sqliteConn is what the driver's connections offer that database/sql uses.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// stmtConn is a connection that keeps its statements prepared. database/sql
// uses a connection from one goroutine at a time, so the map needs no lock.
type stmtConn struct {
	sqliteConn
	stmts map[string]*connStmt
	// inTx: statements run in a transaction are not interrupted when
	// their context ends (txbatch.go says why); database/sql still refuses
	// to start one whose context has ended.
	inTx bool
}

type connStmt struct {
	st driver.Stmt
	// busy while rows read from it are open: a query made meanwhile with
	// the same text (in a loop over those rows) prepares one of its own.
	busy bool
}

// keepStatements wraps conn if it offers what stmtConn needs.
func keepStatements(conn driver.Conn) driver.Conn {
	c, ok := conn.(sqliteConn)
	if !ok {
		return conn
	}
	return &stmtConn{sqliteConn: c, stmts: map[string]*connStmt{}}
}

// stmt returns the kept statement for query, preparing it the first time,
// or nil when the call should prepare its own (a script of several
// statements, which the driver parses one by one anyway, or one in use).
func (c *stmtConn) stmt(ctx context.Context, query string) (*connStmt, error) {
	if s := c.stmts[query]; s != nil {
		if s.busy {
			return nil, nil
		}
		return s, nil
	}
	if strings.Contains(query, ";") {
		return nil, nil
	}
	st, err := c.sqliteConn.PrepareContext(ctx, sqliteText(query))
	if err != nil {
		return nil, err
	}
	if len(c.stmts) >= maxConnStmts {
		for q, s := range c.stmts { // a random one: map order
			if !s.busy {
				_ = s.st.Close()
				delete(c.stmts, q)
				break
			}
		}
	}
	s := &connStmt{st: st}
	c.stmts[query] = s
	return s, nil
}

// call is what a call on the connection runs with: its context (not
// cancelled inside a transaction) and the kept statement for query, nil when
// the call prepares its own.
func (c *stmtConn) call(ctx context.Context, query string) (context.Context, *connStmt, error) {
	if c.inTx {
		ctx = context.WithoutCancel(ctx)
	}
	s, err := c.stmt(ctx, query)
	return ctx, s, err
}

func (c *stmtConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	ctx, s, err := c.call(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.sqliteConn.ExecContext(ctx, sqliteText(query), args)
	}
	return s.st.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *stmtConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	ctx, s, err := c.call(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.sqliteConn.QueryContext(ctx, sqliteText(query), args)
	}
	rows, err := s.st.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	s.busy = true
	return &stmtRows{Rows: rows, s: s}, nil
}

// PrepareContext prepares a statement the caller keeps (DB.prepared).
func (c *stmtConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.sqliteConn.PrepareContext(ctx, sqliteText(query))
}

func (c *stmtConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	t, err := c.sqliteConn.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	c.inTx = true
	return connTx{Tx: t, c: c}, nil
}

// connTx ends its connection's transaction.
type connTx struct {
	driver.Tx
	c *stmtConn
}

func (t connTx) Commit() error {
	t.c.inTx = false
	return t.Tx.Commit()
}

func (t connTx) Rollback() error {
	t.c.inTx = false
	return t.Tx.Rollback()
}

// Close finalizes the kept statements, then closes the connection.
func (c *stmtConn) Close() error {
	for _, s := range c.stmts {
		_ = s.st.Close()
	}
	c.stmts = nil
	return c.sqliteConn.Close()
}

// stmtRows frees its statement for the next call when closed (the driver
// resets it then).
type stmtRows struct {
	driver.Rows
	s *connStmt
}

func (r *stmtRows) Close() error {
	err := r.Rows.Close()
	r.s.busy = false
	return err
}

// The column types stay as the driver reports them.
func (r *stmtRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *stmtRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}
