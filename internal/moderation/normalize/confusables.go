package normalize

// lookalike maps letters of other scripts that look like Latin letters to
// those letters (after lower-casing), so "kіll" with a Cyrillic і reads
// "kill". Compatibility decomposition already takes care of full-width,
// mathematical and circled letters; this table covers what it leaves: the
// Unicode confusables for a-z in Cyrillic, Greek and Latin extensions.
var lookalike = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'ь': 'b', 'с': 'c', 'ԁ': 'd', 'е': 'e', 'ё': 'e', 'һ': 'h', 'н': 'h',
	'і': 'i', 'ї': 'i', 'ӏ': 'l', 'ј': 'j', 'к': 'k', 'м': 'm', 'п': 'n', 'о': 'o', 'р': 'p',
	'ԛ': 'q', 'г': 'r', 'ѕ': 's', 'т': 't', 'у': 'y', 'ў': 'y', 'х': 'x', 'ԝ': 'w', 'ѡ': 'w',
	// Greek
	'α': 'a', 'β': 'b', 'ϲ': 'c', 'δ': 'd', 'ε': 'e', 'η': 'n', 'ι': 'i', 'ϳ': 'j', 'κ': 'k',
	'μ': 'u', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'σ': 'o', 'τ': 't', 'υ': 'u', 'χ': 'x', 'ω': 'w',
	'γ': 'y', 'ζ': 'z',
	// Latin letters without a decomposition
	'ı': 'i', 'ȷ': 'j', 'ł': 'l', 'ø': 'o', 'đ': 'd', 'ħ': 'h', 'ŧ': 't', 'ɑ': 'a', 'ɡ': 'g',
	'ƅ': 'b', 'ɩ': 'i', 'ʀ': 'r', 'ɴ': 'n', 'ᴀ': 'a', 'ʙ': 'b', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e',
	'ɢ': 'g', 'ʜ': 'h', 'ɪ': 'i', 'ᴊ': 'j', 'ᴋ': 'k', 'ʟ': 'l', 'ᴍ': 'm', 'ᴏ': 'o', 'ᴘ': 'p',
	'ꜱ': 's', 'ᴛ': 't', 'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w', 'ʏ': 'y', 'ᴢ': 'z',
	'℮': 'e', 'ɛ': 'e', 'ɔ': 'c', 'ꞵ': 'b',
}

// leet maps the digits and symbols people put inside words for letters
// ("k1ll", "@ss", "sh!t"). It applies only inside a token that has letters,
// never to numbers, so phone numbers and scores stay what they are.
var leet = map[rune]rune{
	'0': 'o', '1': 'i', '2': 'z', '3': 'e', '4': 'a', '5': 's', '6': 'g', '7': 't', '8': 'b', '9': 'g',
	'@': 'a', '$': 's', '!': 'i', '|': 'i', '+': 't', '€': 'e', '£': 'l', '¢': 'c', '§': 's',
}

// leetL is the second reading of the characters that stand for either i
// or l ("ki11").
var leetL = map[rune]rune{'1': 'l', '|': 'l', '!': 'i'}

// Lookalike returns the Latin letter a letter of another script looks like.
func Lookalike(r rune) (rune, bool) {
	m, ok := lookalike[r]
	return m, ok
}
