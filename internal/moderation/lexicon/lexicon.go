// Package lexicon holds the curated word lists and phrase rules of the
// moderation engine (lists/*.txt, embedded) and matches them against
// normalised tokens.
//
// A list file has four kinds of line ('#' starts a comment; a line that
// starts with white space continues the previous one):
//
//	set NAME = word, two words, @other_set      a set of phrases
//	set NAME! = ...                             its words win ambiguous readings ("a$$" reads "ass")
//	rule CATEGORY WEIGHT [any] = PATTERN, PATTERN... [; if @set] [; unless @set]
//	allow CATEGORY[,CATEGORY...] = PATTERN, PATTERN... [; if @set] [; unless @set]
//
// A PATTERN is a sequence of elements: a word, alternatives "a|b|@set",
// alternatives of several words in brackets "(going to|gonna)", a gap "[N]"
// (up to N tokens of anything), "#num" (a number), "#minor" (an age under
// 18), "#any" (one token, not first); a trailing "?" makes an element
// optional. A rule adds WEIGHT to its category when its pattern matches;
// "any" marks a rule that holds in every language. An allow pattern masks
// the tokens it matches from the rules of its categories: that is how "kill
// shot", "smash" and "beat them" stay sports talk. "if"/"unless" make a
// rule or allowance depend on whether the text contains a phrase of a set.
package lexicon

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/moderation/normalize"
)

//go:embed lists/*.txt
var files embed.FS

type elemKind uint8

const (
	kWords elemKind = iota
	kGap
	kNum
	kAny
	kMinor
)

type elem struct {
	kind    elemKind
	opt     bool
	gap     int
	first   map[string][][]string // first word -> the rest of each phrase starting with it
	display string
}

// Rule is one compiled rule or allowance.
type Rule struct {
	Category string  // rules: the category
	Mask     uint32  // allowances: the categories masked (bit per Lexicon.Categories index)
	Weight   float64 // rules
	Any      bool    // holds in every language
	Source   string  // file:line, for tests and explanations
	bit      uint32  // rules: the mask bit of Category
	elems    []elem
	ifSet    string
	unless   string
}

// Lexicon is the compiled set of lists.
type Lexicon struct {
	Categories []string // in order of first appearance; bit i of a mask is Categories[i]
	Vocab      *normalize.Vocab
	sets       map[string][][]string
	rules      []*Rule
	allows     []*Rule
	index      map[string][]int // first word -> rules
	allowIndex map[string][]int
	anyStart   []int // rules that start with a predicate
	words      map[string]bool
	preferred  map[string]bool
	catIndex   map[string]int
	cond       map[string][][]string // expanded sets used in conditions
	// Digest identifies the list contents (the engine version includes it).
	Digest string
}

// Load compiles the embedded lists.
func Load() (*Lexicon, error) {
	return LoadFS(files, "lists")
}

// LoadFS compiles every *.txt file under dir of fsys.
func LoadFS(fsys fs.FS, dir string) (*Lexicon, error) {
	names, err := fs.Glob(fsys, dir+"/*.txt")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	l := &Lexicon{sets: map[string][][]string{}, index: map[string][]int{}, allowIndex: map[string][]int{},
		words: map[string]bool{}, preferred: map[string]bool{}, catIndex: map[string]int{}, cond: map[string][][]string{}}
	var all strings.Builder
	type pending struct{ line, src string }
	var rules []pending
	for _, name := range names {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		all.WriteString(name)
		all.Write(b)
		for _, ln := range logicalLines(string(b), name) {
			if strings.HasPrefix(ln.text, "set ") {
				if err := l.parseSet(ln.text[4:]); err != nil {
					return nil, fmt.Errorf("%s: %w", ln.src, err)
				}
				continue
			}
			rules = append(rules, pending{ln.text, ln.src})
		}
	}
	// Sets first (they may be defined after use), then rules.
	for _, p := range rules {
		// "rule c w = a b, c d ; if @x" is the rules "a b" and "c d".
		head, body, _ := strings.Cut(p.line, "=")
		pats, conds, _ := strings.Cut(body, ";")
		if conds != "" {
			conds = ";" + conds
		}
		for _, pat := range strings.Split(pats, ",") {
			if err := l.parseRule(head+"="+pat+conds, p.src); err != nil {
				return nil, fmt.Errorf("%s: %w", p.src, err)
			}
		}
	}
	words := make([]string, 0, len(l.words))
	for w := range l.words {
		words = append(words, w)
	}
	l.Vocab = normalize.NewVocab(words, func(w string) bool { return l.preferred[w] })
	l.Digest = digest(all.String())
	return l, nil
}

type logicalLine struct{ text, src string }

func logicalLines(s, name string) []logicalLine {
	var out []logicalLine
	for i, raw := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(raw), "#") {
			continue
		}
		if j := strings.Index(raw, " # "); j >= 0 {
			raw = raw[:j]
		}
		if strings.TrimSpace(raw) == "" {
			continue
		}
		if (raw[0] == ' ' || raw[0] == '\t') && len(out) > 0 {
			out[len(out)-1].text += " " + strings.TrimSpace(raw)
			continue
		}
		out = append(out, logicalLine{strings.TrimSpace(raw), fmt.Sprintf("%s:%d", name, i+1)})
	}
	return out
}

func (l *Lexicon) parseSet(s string) error {
	name, body, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("set without '='")
	}
	name = strings.TrimSpace(name)
	prefer := strings.HasSuffix(name, "!")
	name = strings.TrimSuffix(name, "!")
	if _, dup := l.sets[name]; dup {
		return fmt.Errorf("set %s defined twice", name)
	}
	var phrases [][]string
	for _, m := range strings.Split(body, ",") {
		ws := words(m)
		if len(ws) == 0 {
			continue
		}
		phrases = append(phrases, ws)
		for _, w := range ws {
			if !strings.HasPrefix(w, "@") {
				l.words[w] = true
				if prefer && len(ws) == 1 {
					l.preferred[w] = true
				}
			}
		}
	}
	l.sets[name] = phrases
	return nil
}

// words splits a phrase the way the normaliser reads text: lower case,
// apostrophes dropped.
func words(s string) []string {
	f := strings.Fields(strings.ToLower(strings.ReplaceAll(s, "'", "")))
	return f
}

// expand resolves @set references, recursively.
func (l *Lexicon) expand(phrase []string, depth int) ([][]string, error) {
	if depth > 8 {
		return nil, fmt.Errorf("sets nested too deeply")
	}
	out := [][]string{{}}
	for _, w := range phrase {
		var alts [][]string
		if strings.HasPrefix(w, "@") {
			set, ok := l.sets[w[1:]]
			if !ok {
				return nil, fmt.Errorf("unknown set %s", w)
			}
			for _, p := range set {
				e, err := l.expand(p, depth+1)
				if err != nil {
					return nil, err
				}
				alts = append(alts, e...)
			}
		} else {
			alts = [][]string{{w}}
		}
		next := make([][]string, 0, len(out)*len(alts))
		for _, o := range out {
			for _, a := range alts {
				next = append(next, append(append([]string(nil), o...), a...))
			}
		}
		out = next
	}
	return out, nil
}

func (l *Lexicon) parseRule(s, src string) error {
	head, body, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("rule without '='")
	}
	f := strings.Fields(head)
	if len(f) < 2 {
		return fmt.Errorf("short rule head %q", head)
	}
	r := &Rule{Source: src}
	switch f[0] {
	case "rule":
		if len(f) < 3 {
			return fmt.Errorf("rule needs a category and a weight")
		}
		r.Category = f[1]
		w, err := strconv.ParseFloat(f[2], 64)
		if err != nil || w <= 0 || w > 1 {
			return fmt.Errorf("bad weight %q", f[2])
		}
		r.Weight = w
		r.bit = 1 << l.category(r.Category)
		for _, opt := range f[3:] {
			if opt != "any" {
				return fmt.Errorf("unknown option %q", opt)
			}
			r.Any = true
		}
		l.category(r.Category)
	case "allow":
		for _, c := range strings.Split(f[1], ",") {
			r.Mask |= 1 << l.category(c)
		}
	default:
		return fmt.Errorf("unknown line kind %q", f[0])
	}
	parts := strings.Split(body, ";")
	for _, cond := range parts[1:] {
		cf := strings.Fields(cond)
		if len(cf) != 2 || !strings.HasPrefix(cf[1], "@") {
			return fmt.Errorf("bad condition %q", cond)
		}
		ps, err := l.expand([]string{cf[1]}, 0)
		if err != nil {
			return err
		}
		l.cond[cf[1][1:]] = ps
		switch cf[0] {
		case "if":
			r.ifSet = cf[1][1:]
		case "unless":
			r.unless = cf[1][1:]
		default:
			return fmt.Errorf("bad condition %q", cond)
		}
	}
	elems, err := splitPattern(parts[0])
	if err != nil {
		return err
	}
	for _, tok := range elems {
		e, err := l.parseElem(tok)
		if err != nil {
			return err
		}
		r.elems = append(r.elems, e)
	}
	if len(r.elems) == 0 || r.elems[0].opt || r.elems[0].kind == kGap {
		return fmt.Errorf("a pattern must start with a required word")
	}
	idx, index := len(l.rules), l.index
	if r.Category == "" {
		idx, index = len(l.allows), l.allowIndex
		l.allows = append(l.allows, r)
	} else {
		l.rules = append(l.rules, r)
	}
	if r.elems[0].kind != kWords {
		if r.Category == "" || r.elems[0].kind == kAny {
			return fmt.Errorf("a pattern must start with a word, #num or #minor")
		}
		l.anyStart = append(l.anyStart, idx)
		return nil
	}
	for w := range r.elems[0].first {
		index[w] = append(index[w], idx)
	}
	return nil
}

func (l *Lexicon) category(c string) int {
	if i, ok := l.catIndex[c]; ok {
		return i
	}
	l.catIndex[c] = len(l.Categories)
	l.Categories = append(l.Categories, c)
	return len(l.Categories) - 1
}

func (l *Lexicon) parseElem(tok string) (elem, error) {
	e := elem{display: tok}
	if strings.HasPrefix(tok, "[") && strings.HasSuffix(tok, "]") {
		n, err := strconv.Atoi(tok[1 : len(tok)-1])
		if err != nil || n < 1 || n > 6 {
			return e, fmt.Errorf("bad gap %q", tok)
		}
		e.kind, e.gap = kGap, n
		return e, nil
	}
	if strings.HasSuffix(tok, "?") {
		e.opt = true
		tok = tok[:len(tok)-1]
	}
	switch tok {
	case "#num":
		e.kind = kNum
		return e, nil
	case "#any":
		e.kind = kAny
		return e, nil
	case "#minor":
		e.kind = kMinor
		return e, nil
	}
	e.first = map[string][][]string{}
	group := strings.HasPrefix(tok, "(") && strings.HasSuffix(tok, ")")
	if group {
		tok = tok[1 : len(tok)-1]
	}
	for _, alt := range strings.Split(tok, "|") {
		ws := words(alt)
		if len(ws) == 0 || len(ws) > 1 && !group {
			return e, fmt.Errorf("bad alternative %q in %q", alt, tok)
		}
		for _, w := range ws {
			if !strings.HasPrefix(w, "@") {
				l.words[w] = true
			}
		}
		ps, err := l.expand(ws, 0)
		if err != nil {
			return e, err
		}
		for _, p := range ps {
			e.first[p[0]] = append(e.first[p[0]], p[1:])
		}
	}
	return e, nil
}

// Set returns the phrases of a set (nil if unknown), for tests and the
// detectors written in code.
func (l *Lexicon) Set(name string) [][]string {
	ps, err := l.expand([]string{"@" + name}, 0)
	if err != nil {
		return nil
	}
	return ps
}

// Rules returns the number of rules and allowances.
func (l *Lexicon) Rules() (rules, allows int) { return len(l.rules), len(l.allows) }

// splitPattern splits a pattern into elements: words separated by spaces,
// except inside brackets.
func splitPattern(p string) ([]string, error) {
	var out []string
	depth, start := 0, -1
	for i, r := range p + " " {
		switch {
		case r == '(':
			if depth == 0 && start < 0 {
				start = i
			}
			depth++
		case r == ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced ')' in %q", p)
			}
		case r == ' ' || r == '\t':
			if depth == 0 && start >= 0 {
				out = append(out, p[start:i])
				start = -1
			}
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced '(' in %q", p)
	}
	return out, nil
}
