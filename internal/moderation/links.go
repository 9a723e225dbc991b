package moderation

import (
	"strings"
	"unicode"

	"github.com/matchpoint-api/matchpoint/internal/moderation/normalize"
)

// Links, handles and crypto wallet addresses: language-neutral signals.

var tlds = map[string]bool{"com": true, "net": true, "org": true, "co": true, "uk": true, "io": true, "me": true,
	"ly": true, "gg": true, "app": true, "info": true, "biz": true, "xyz": true, "ru": true, "fr": true, "de": true,
	"es": true, "it": true, "nl": true, "be": true, "ch": true, "eu": true, "us": true, "ca": true, "au": true,
	"in": true, "tv": true, "site": true, "online": true, "shop": true, "store": true, "club": true, "top": true,
	"link": true, "live": true, "example": true, "at": true, "pt": true, "br": true, "cn": true, "pl": true}

var offPlatformHosts = map[string]bool{"wa.me": true, "t.me": true, "telegram.me": true, "instagram.com": true,
	"snapchat.com": true, "facebook.com": true, "fb.me": true, "m.me": true, "tiktok.com": true, "discord.gg": true,
	"discord.com": true, "twitter.com": true, "x.com": true, "kik.me": true, "chat.whatsapp.com": true, "line.me": true}

var shorteners = map[string]bool{"bit.ly": true, "tinyurl.com": true, "goo.gl": true, "t.co": true, "is.gd": true,
	"ow.ly": true, "cutt.ly": true, "rebrand.ly": true, "shorturl.at": true, "tiny.cc": true, "rb.gy": true}

var phishWords = []string{"login", "secure", "verify", "account", "update", "signin", "wallet", "support", "auth",
	"confirm", "banking", "payment", "pay-", "-pay", "refund", "unlock"}

type link struct {
	start, end int // Base indices
	host       string
}

func findLinks(b []rune) []link {
	var out []link
	for i := 0; i < len(b); {
		if b[i] == ' ' {
			i++
			continue
		}
		j := i
		for j < len(b) && b[j] != ' ' {
			j++
		}
		start, end := i, j
		for start < end && strings.ContainsRune("([{<\"'", b[start]) {
			start++
		}
		for end > start && strings.ContainsRune(".,;:!?)]}>\"'", b[end-1]) {
			end--
		}
		if h, ok := linkHost(string(b[start:end])); ok {
			out = append(out, link{start, end, h})
		}
		i = j
	}
	return out
}

// linkHost reports whether a chunk is a link, and its host.
func linkHost(c string) (string, bool) {
	if strings.ContainsRune(c, '@') && !strings.Contains(c, "/") {
		return "", false // an e-mail address
	}
	explicit := false
	for _, p := range []string{"https://", "http://", "hxxp://", "hxxps://"} {
		if strings.HasPrefix(c, p) {
			c, explicit = c[len(p):], true
		}
	}
	if strings.HasPrefix(c, "www.") {
		explicit = true
	}
	host, _, _ := strings.Cut(c, "/")
	host, _, _ = strings.Cut(host, "?")
	host = strings.TrimPrefix(host, "www.")
	labels := strings.Split(host, ".")
	if len(labels) < 2 {
		return "", false
	}
	for _, l := range labels {
		if l == "" {
			return "", false
		}
		for _, r := range l {
			if !(r < 0x80 && (unicode.IsLetter(r) || isDigit(r) || r == '-')) {
				return "", false
			}
		}
	}
	if !explicit && !tlds[labels[len(labels)-1]] {
		return "", false
	}
	if !explicit && allDigits(strings.Join(labels, "")) {
		return "", false // 4.50, 1.2.3
	}
	return host, true
}

func detectLinks(t *normalize.Text, s *scorer, ctx Context) {
	links := findLinks(t.Base)
	seen := map[string]int{}
	for _, l := range links {
		st, en := t.Span(l.start, l.end)
		seen[l.host]++
		full := string(t.Base[l.start:l.end])
		switch {
		case offPlatformHosts[l.host] || strings.HasSuffix(l.host, ".instagram.com"):
			s.add(idx(OffPlatform), 0.85, st, en)
		case l.host == "onlyfans.com":
			s.add(idx(Sexual), 0.85, st, en)
		case shorteners[l.host]:
			s.add(idx(Scam), 0.35, st, en)
			s.add(idx(Spam), 0.35, st, en)
		default:
			if ctx != ContextEvent {
				s.add(idx(Spam), 0.15, st, en)
			}
		}
		for _, w := range phishWords {
			if strings.Contains(l.host, w) {
				s.add(idx(Scam), 0.45, st, en)
				break
			}
		}
		if allDigits(strings.ReplaceAll(l.host, ".", "")) {
			s.add(idx(Scam), 0.3, st, en)
		}
		if strings.Contains(full, "refund") || strings.Contains(full, "claim") || strings.Contains(full, "prize") {
			s.add(idx(Scam), 0.3, st, en)
		}
		if seen[l.host] == 2 && ctx != ContextEvent {
			s.add(idx(Spam), 0.4, st, en)
		}
	}
	if len(links) >= 2 && ctx != ContextEvent {
		s.add(idx(Spam), 0.25, 0, 0)
	}
	wallets(t, s)
}

// wallets finds crypto wallet addresses: bech32 ("bc1..."), Ethereum
// ("0x" and 40 hex digits) and base58 Bitcoin addresses.
func wallets(t *normalize.Text, s *scorer) {
	for _, tok := range t.Tokens {
		raw := tok.Raw
		ok := false
		switch {
		case strings.HasPrefix(raw, "bc1") && len(raw) >= 26 && len(raw) <= 62:
			ok = true
		case strings.HasPrefix(raw, "0x") && len(raw) == 42:
			ok = true
			for _, r := range raw[2:] {
				if !strings.ContainsRune("0123456789abcdef", r) {
					ok = false
				}
			}
		case (raw[0] == '1' || raw[0] == '3') && len(raw) >= 26 && len(raw) <= 35:
			ok = true
			for _, r := range raw {
				if !(isDigit(r) || r >= 'a' && r <= 'z') {
					ok = false
				}
			}
		}
		if ok {
			st, en := t.Span(tok.Start, tok.End)
			s.add(idx(Scam), 0.6, st, en)
		}
	}
}

var handleApps = map[string]bool{"whatsapp": true, "snapchat": true, "snap": true, "sc": true, "instagram": true,
	"insta": true, "ig": true, "telegram": true, "tg": true, "kik": true, "discord": true, "wechat": true, "line": true,
	"skype": true, "viber": true, "tiktok": true, "twitter": true, "fb": true, "facebook": true, "messenger": true, "signal": true}

var handleFiller = map[string]bool{"is": true, "id": true, "username": true, "user": true, "name": true, "handle": true,
	"tag": true, "account": true, "me": true, "at": true, "on": true, "my": true, "its": true, "here": true, "number": true,
	"no": true, "num": true}

// detectHandles finds an account named right after an app: "snap:
// jj_goalie", "IG is @laura_runs", "WhatsApp me on 07700 900 222".
func detectHandles(t *normalize.Text, s *scorer) {
	toks := t.Tokens
	for i, tok := range toks {
		if !handleApps[tok.Word] {
			continue
		}
		for k := i + 1; k < len(toks) && k <= i+4; k++ {
			if handleFiller[toks[k].Word] {
				continue
			}
			h := handleAt(t.Base, toks[k].Start)
			if isHandle(h) || phoneAt(t.Base, toks[k].Start) {
				st, _ := t.Span(tok.Start, tok.End)
				_, en := t.Span(toks[k].Start, toks[k].Start+len([]rune(h)))
				s.add(idx(OffPlatform), 0.8, st, en)
			}
			break
		}
	}
}

func handleAt(b []rune, i int) string {
	j := i
	for j < len(b) && (b[j] < 0x80 && (unicode.IsLetter(b[j]) || isDigit(b[j])) || strings.ContainsRune("._@#-", b[j])) {
		j++
	}
	for j > i && strings.ContainsRune(".-", b[j-1]) {
		j--
	}
	return string(b[i:j])
}

func isHandle(h string) bool {
	if len(h) < 3 || allDigits(h) {
		return false
	}
	if h[0] == '@' {
		return len(h) >= 3
	}
	letters, digits := false, false
	for _, r := range h {
		if unicode.IsLetter(r) {
			letters = true
		}
		if isDigit(r) {
			digits = true
		}
	}
	return letters && (digits || strings.ContainsAny(h, "._#"))
}

func phoneAt(b []rune, i int) bool {
	if i >= len(b) || !(isDigit(b[i]) || b[i] == '+' || b[i] == '(') {
		return false
	}
	_, digits, _ := numberRun(b, i)
	return digits >= 7
}
