package moderation

import (
	"strings"
	"unicode"

	"github.com/matchpoint-api/matchpoint/internal/moderation/normalize"
)

// A small offline language detector: the writing system first, then, for
// Latin text, which language's common words the text uses. Short Latin
// text with no clear sign of another language is English, the language
// every layer covers.

var stopWords = map[string][]string{
	"en": strings.Fields(`the and to of a in is it you that for on with are this be at have not i me my we
		your was will can just do what so if but up out get im dont its ill see all they he she there when
		about how an or from by as tomorrow tonight play game lol thanks yeah ok want like going gonna who
		anyone us our would been has had were should could did am our their them then than`),
	"es": strings.Fields(`el la los las de del que y en un una es por para con no se al lo mi tu te me su pero
		mas muy como esta estas estoy hola gracias manana sabado domingo jugamos vamos nos porque donde
		cuando quien numero llamame dinero rapido desde casa visita gana llama hoy tambien`),
	"fr": strings.Fields(`le la les de des du un une et est en que qui pour pas sur au aux avec ce je tu il
		nous vous on se mon ma mes moi toi ne a demain samedi terrain bonjour merci ajoute envoie renvoie
		et je te ou dans mais tres aussi ici`),
	"de": strings.Fields(`der die das und ist nicht ich du wir ihr sie es ein eine mit zu auf fur den dem von
		im heute abend morgen kommst spielen meine mein nummer bitte danke auch noch wie was`),
	"it": strings.Fields(`il lo la gli le di che e un una per con non sono ci vediamo al alle alla del della
		domani stasera partita campo sette ciao grazie mio mia anche come`),
	"pt": strings.Fields(`o a os as de do da dos das que e um uma para com nao em no na vamos jogar amanha
		depois trabalho obrigado voce meu minha tambem`),
	"nl": strings.Fields(`de het een en van ik je jij we wij zullen zaterdag potje niet is op met voor dat die
		te maar ook morgen`),
}

var stopIndex = func() map[string][]string {
	m := map[string][]string{}
	for lang, ws := range stopWords {
		for _, w := range ws {
			m[w] = append(m[w], lang)
		}
	}
	return m
}()

var scripts = []struct {
	lang  string
	table *unicode.RangeTable
}{
	{"ru", unicode.Cyrillic}, {"el", unicode.Greek}, {"ar", unicode.Arabic}, {"he", unicode.Hebrew},
	{"zh", unicode.Han}, {"ja", unicode.Hiragana}, {"ja", unicode.Katakana}, {"ko", unicode.Hangul},
	{"th", unicode.Thai}, {"hi", unicode.Devanagari},
}

// detectLanguage returns an ISO 639-1 code, or "und" for text without
// letters. The writing system is counted per word of the original: a word
// with a Latin letter is Latin however many look-alike letters it hides
// ("kіll" with a Cyrillic і), and so is a word made only of look-alikes that
// reads as a known English word.
func detectLanguage(text string, t *normalize.Text, v *normalize.Vocab) string {
	latin, other := 0, map[string]int{}
	kana := false
	word := make([]rune, 0, 32)
	flush := func() {
		if len(word) == 0 {
			return
		}
		hasLatin := false
		for _, r := range word {
			if r < 0x80 || unicode.Is(unicode.Latin, r) {
				hasLatin = true
				break
			}
		}
		if hasLatin || disguisedWord(word, v) {
			latin += len(word)
		} else {
			for _, r := range word {
				for _, s := range scripts {
					if unicode.Is(s.table, r) {
						other[s.lang]++
						if s.lang == "ja" {
							kana = true
						}
						break
					}
				}
			}
		}
		word = word[:0]
	}
	for _, r := range text {
		if unicode.IsLetter(r) {
			word = append(word, r)
		} else {
			flush()
		}
	}
	flush()
	best, n := "", 0
	for lang, c := range other {
		if c > n || c == n && lang < best {
			best, n = lang, c
		}
	}
	if kana && best == "zh" {
		best = "ja"
	}
	if n > latin {
		return best
	}
	if latin == 0 {
		return "und"
	}
	hits := map[string]int{}
	for _, tok := range t.Tokens {
		for _, lang := range stopIndex[tok.Word] {
			hits[lang]++
		}
	}
	lang, top := "en", 0
	for l, h := range hits {
		if l != "en" && (h > top || h == top && l < lang) {
			lang, top = l, h
		}
	}
	if top >= 2 && top > hits["en"] {
		return lang
	}
	return "en"
}

// disguisedWord reports whether a word written only in look-alike letters
// of another script reads as a known English word.
func disguisedWord(word []rune, v *normalize.Vocab) bool {
	mapped := make([]rune, len(word))
	for i, r := range word {
		m, ok := normalize.Lookalike(unicode.ToLower(r))
		if !ok {
			return false
		}
		mapped[i] = m
	}
	return v.Has(string(mapped))
}
