package web

import "github.com/matchpoint-api/matchpoint/internal/auth"

// consentLine is one thing the consent page says an application may do.
type consentLine struct {
	Name, Description, Level string
}

// What each scope lets an application do through the API, in the words of
// the consent page. They must stay true to the operations' rules: a
// third-party application never deletes the account, changes its username
// or email, or manages API keys and other applications' access
// (httpapi.accountManager), whatever its scopes; the service's own
// (first-party) applications may.
var consentWords = map[string][2]string{ // scope -> third-party, first-party
	auth.ScopeRead: {
		"See your profile, email address included, and other members' public profiles",
		"See your profile, email address included, other members' public profiles, your API keys and the apps you authorized",
	},
	auth.ScopeWrite: {
		"Change your profile (not your username) and ask for ID verification; later, send messages for you",
		"Change your profile and username, ask for ID verification, create and revoke API keys, and remove apps' access; later, send messages for you",
	},
	auth.ScopeProfile: {
		"See and change your whole profile (not your username), and ask for ID verification",
		"See and change your whole profile and username, ask for ID verification, see and remove apps' access, and delete your account",
	},
	auth.ScopeMatching: {
		"Use the matching algorithm and see your recommendations",
		"Use the matching algorithm and see your recommendations",
	},
	auth.ScopeEvents: {
		"Create and manage sports events and activities for you",
		"Create and manage sports events and activities for you",
	},
	auth.ScopeAdmin: {
		"Administrative access: operator tasks, if your account is an operator's (Enterprise only)",
		"Administrative access: operator tasks, if your account is an operator's",
	},
}

func consentScopes(scopes []string, firstParty bool) []consentLine {
	out := make([]consentLine, 0, len(scopes))
	for _, s := range scopes {
		info := auth.Describe(s)
		desc := info.Description
		if w, ok := consentWords[s]; ok {
			desc = w[0]
			if firstParty {
				desc = w[1]
			}
		}
		out = append(out, consentLine{Name: s, Description: desc, Level: info.Level})
	}
	return out
}
