// Package auth holds who is calling (Principal) and what they may do (scopes).
// OAuth access tokens and API keys both resolve to a Principal.
package auth

import (
	"slices"
	"strings"
)

// Scopes of the API document, section 5.3.
const (
	ScopeRead     = "read"
	ScopeWrite    = "write"
	ScopeProfile  = "profile"
	ScopeMatching = "matching"
	ScopeEvents   = "events"
	ScopeAdmin    = "admin"
)

// ScopeInfo describes a scope in the plain words shown on the consent page.
type ScopeInfo struct {
	Name        string
	Description string
	Level       string
}

// AllScopes lists every scope in the order the consent page shows them.
var AllScopes = []ScopeInfo{
	{ScopeRead, "Read your profile and public data", "Basic"},
	{ScopeWrite, "Create and update your data, and send messages for you", "Standard"},
	{ScopeProfile, "Full access to your profile information", "Enhanced"},
	{ScopeMatching, "Use the matching algorithm and see your recommendations", "Enhanced"},
	{ScopeEvents, "Create and manage sports events and activities for you", "Enhanced"},
	{ScopeAdmin, "Administrative access (Enterprise only)", "Enterprise"},
}

// KnownScope reports whether s names a scope.
func KnownScope(s string) bool {
	for _, si := range AllScopes {
		if si.Name == s {
			return true
		}
	}
	return false
}

// Describe returns the consent-page description of a scope.
func Describe(s string) ScopeInfo {
	for _, si := range AllScopes {
		if si.Name == s {
			return si
		}
	}
	return ScopeInfo{Name: s, Description: s}
}

// ParseScopes splits a space-separated scope string, dropping duplicates and
// empty parts, and returns the set in canonical order (that of AllScopes, then
// unknown names in input order), so equal sets have equal strings.
func ParseScopes(s string) []string {
	var out []string
	for _, f := range strings.Fields(s) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return Canonical(out)
}

// Canonical sorts a scope set into the order of AllScopes.
func Canonical(set []string) []string {
	rank := func(s string) int {
		for i, si := range AllScopes {
			if si.Name == s {
				return i
			}
		}
		return len(AllScopes)
	}
	out := slices.Clone(set)
	slices.SortStableFunc(out, func(a, b string) int { return rank(a) - rank(b) })
	return out
}

// FormatScopes joins a scope set with spaces, as the document's wire format wants.
func FormatScopes(set []string) string { return strings.Join(Canonical(set), " ") }

// Subset reports whether every scope of a is in b.
func Subset(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}
