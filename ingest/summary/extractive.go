// Package summary writes the one-line page summaries that page retrieval searches (the FHNW prototype: "highly
// information-dense text with consistent length"). Extractive summaries need no model; LLM summaries come from any
// OpenAI-compatible chat upstream. Both are safe for concurrent use.
package summary

import (
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// Doc is a page to summarise.
type Doc struct {
	Title    string
	Markdown string
}

// ExtractiveConfig shapes extractive summaries. The zero value uses the defaults.
type ExtractiveConfig struct {
	// MaxHeadings is the number of section headings kept; default 12.
	MaxHeadings int
	// LeadSentences is the number of leading content sentences kept; default 2.
	LeadSentences int
	// KeyTerms is the number of distinctive terms (highest tf-idf in the corpus) kept; default 12.
	KeyTerms int
	// MaxChars bounds the summary; default 700.
	MaxChars int
}

func (c ExtractiveConfig) withDefaults() ExtractiveConfig {
	if c.MaxHeadings == 0 {
		c.MaxHeadings = 12
	}
	if c.LeadSentences == 0 {
		c.LeadSentences = 2
	}
	if c.KeyTerms == 0 {
		c.KeyTerms = 12
	}
	if c.MaxChars == 0 {
		c.MaxChars = 700
	}
	return c
}

// Extractive summarises every doc in one line: its title, its section headings, its lead sentences and its most
// distinctive terms by tf-idf over docs. The terms make it a corpus-level operation: summarise all pages together.
func Extractive(docs []Doc, cfg ExtractiveConfig) []string {
	return ExtractiveFunc(len(docs), func(i int) Doc { return docs[i] }, cfg)
}

// ExtractiveFunc is Extractive over n documents that doc returns, for a caller that keeps them on disk: it asks
// for each twice (counting terms, then summarising), from several goroutines at once.
func ExtractiveFunc(n int, doc func(i int) Doc, cfg ExtractiveConfig) []string {
	cfg = cfg.withDefaults()
	// Term counts per doc are independent, and so is each summary once the document frequencies are known: both
	// passes run on all cores. A doc's terms are counted again in the second pass rather than kept from the
	// first, where every doc's would be held at once (270 MB for ten copies of the Berkeley guide, against the
	// vocabulary's few megabytes). The result does not depend on the scheduling.
	var mu sync.Mutex
	df := map[string]int{}
	eachDoc(n, func(i int) {
		tf := termCounts(doc(i).Markdown)
		mu.Lock()
		for _, w := range tf.words {
			df[w]++
		}
		mu.Unlock()
	})
	out := make([]string, n)
	eachDoc(n, func(i int) {
		d := doc(i)
		out[i] = extract(d, termCounts(d.Markdown), df, float64(n), cfg)
	})
	return out
}

// eachDoc calls f(0..n-1) from one goroutine per core and returns when all calls have.
func eachDoc(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		}()
	}
	wg.Wait()
}

func extract(d Doc, tf terms, df map[string]int, n float64, cfg ExtractiveConfig) string {
	var headings, sentences []string
	seen := map[string]bool{strings.ToLower(d.Title): true}
	for _, line := range strings.Split(d.Markdown, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			if len(headings) >= cfg.MaxHeadings {
				continue
			}
			h := plain(strings.TrimLeft(line, "# "))
			if h != "" && !seen[strings.ToLower(h)] {
				seen[strings.ToLower(h)] = true
				headings = append(headings, h)
			}
			continue
		}
		if len(sentences) >= cfg.LeadSentences || strings.HasPrefix(line, "|") {
			continue
		}
		text := plain(strings.TrimLeft(line, "*-+> "))
		if len(strings.Fields(text)) < 6 { // labels, buttons, table fragments
			continue
		}
		for _, s := range splitSentences(text) {
			if len(sentences) < cfg.LeadSentences && len(strings.Fields(s)) >= 4 {
				sentences = append(sentences, s)
			}
		}
	}
	type scored struct {
		w string
		s float64
	}
	// The best KeyTerms by score, then word: kept sorted by insertion, as a page has thousands of candidates.
	better := func(a, b scored) bool { return a.s > b.s || a.s == b.s && a.w < b.w }
	limit := cfg.KeyTerms
	if limit < 0 { // no limit
		limit = len(tf.words)
	}
	top := make([]scored, 0, limit+1)
	for k, w := range tf.words {
		c := tf.counts[k]
		if df[w] < 1 || len(w) < 3 {
			continue
		}
		sc := scored{w, (1 + math.Log(float64(c))) * math.Log(1+n/float64(df[w]))}
		if len(top) == limit && (limit == 0 || !better(sc, top[len(top)-1])) {
			continue
		}
		i := sort.Search(len(top), func(i int) bool { return better(sc, top[i]) })
		top = append(top, scored{})
		copy(top[i+1:], top[i:])
		top[i] = sc
		if len(top) > limit {
			top = top[:limit]
		}
	}
	key := make([]string, len(top))
	for i, r := range top {
		key[i] = r.w
	}

	var b strings.Builder
	b.WriteString(plain(d.Title))
	if len(headings) > 0 {
		b.WriteString(": ")
		b.WriteString(strings.Join(headings, "; "))
	}
	b.WriteString(".")
	for _, s := range sentences {
		b.WriteString(" ")
		b.WriteString(strings.TrimRight(s, "."))
		b.WriteString(".")
	}
	if len(key) > 0 {
		b.WriteString(" Key terms: ")
		b.WriteString(strings.Join(key, ", "))
		b.WriteString(".")
	}
	return truncate(b.String(), cfg.MaxChars)
}

// plain strips markdown emphasis, links and images down to their text.
func plain(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '*', '_', '`', '[':
			continue
		case ']':
			// drop a following (url)
			if i+1 < len(s) && s[i+1] == '(' {
				if j := strings.IndexByte(s[i+1:], ')'); j >= 0 {
					i += j + 1
				}
			}
		case '!':
			if i+1 < len(s) && s[i+1] == '[' {
				continue
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

func splitSentences(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '.' && c != '?' && c != '!' || i+1 < len(s) && s[i+1] != ' ' {
			continue
		}
		if c == '.' && abbreviation(s[start:i]) {
			continue
		}
		out = append(out, strings.TrimSpace(s[start:i+1]))
		start = i + 1
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// abbreviation reports whether the word before a period is an initial or abbreviation ("J.", "e.g.", "Dr.")
// rather than the end of a sentence.
func abbreviation(before string) bool {
	w := before[strings.LastIndexByte(before, ' ')+1:]
	switch strings.ToLower(w) {
	case "dr", "mr", "ms", "mrs", "st", "no", "vs", "prof", "approx", "dept", "etc",
		"jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec":
		return true
	}
	return len(w) <= 1 || strings.Contains(w, ".")
}

// terms are the key-term candidates of a page with their counts, in first-occurrence order.
type terms struct {
	words  []string
	counts []int
}

// termCounts counts the key-term candidates of s: its lowercase alphabetic words (maximal runs of letters after
// lowercasing, as strings.ToLower then strings.FieldsFunc on non-letters would give) of 3 to 24 bytes that are
// neither stopwords nor start with "http". It lowercases one word at a time into a fixed buffer, so only the
// first occurrence of each distinct word allocates.
func termCounts(s string) terms {
	var t terms
	slot := make(map[string]int, 256) // word -> index into t, or -1 for a word that is not a candidate
	var buf [24]byte
	w := buf[:0]
	long := false // the current word is longer than buf
	flush := func() {
		if !long && len(w) > 2 {
			// One lookup for a word seen before on the page; the stopword test runs once per distinct word.
			if k, ok := slot[string(w)]; ok {
				if k >= 0 {
					t.counts[k]++
				}
			} else if word := string(w); stopwords[word] || len(w) >= 4 && word[:4] == "http" {
				slot[word] = -1
			} else {
				slot[word] = len(t.words)
				t.words = append(t.words, word)
				t.counts = append(t.counts, 1)
			}
		}
		w, long = buf[:0], false
	}
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			i++
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if 'a' <= c && c <= 'z' {
				if len(w) < len(buf) {
					w = append(w, c)
				} else {
					long = true
				}
			} else if len(w) > 0 || long {
				flush()
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		// Invalid bytes decode to U+FFFD, as strings.ToLower writes them, and that is not a letter.
		if r = unicode.ToLower(r); !unicode.IsLetter(r) {
			if len(w) > 0 || long {
				flush()
			}
			continue
		}
		if len(w)+utf8.RuneLen(r) <= len(buf) && !long {
			w = utf8.AppendRune(w, r)
		} else {
			long = true
		}
	}
	if len(w) > 0 || long {
		flush()
	}
	return t
}

func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := strings.LastIndexByte(s[:max], ' ')
	if cut <= 0 {
		cut = max
	}
	return strings.TrimRight(s[:cut], ",;: ") + "…"
}

var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for are but not you all any can had her was one our out has him his how man
new now old see two way who boy did its let put say she too use with that this from they will have been were when
your what which their there than then them these those into more some such only also other each about after before
would could should shall may might must upon very just over under most much many both being does done doing here
where while during through between within without because until again further once same own off per via www com
http https html page pages section click link links home`) {
		m[w] = true
	}
	return m
}()
