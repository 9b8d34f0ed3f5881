package retrieval

import (
	"iter"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ragproxy/ragproxy/markdown"
	"github.com/ragproxy/ragproxy/textnorm"
)

// Evidence selection. An answer written without a model quotes the site, and a reader wants the sentence that
// answers first, not three passages to scan: the tuition table's row, not the I-20 funding paragraph beside it.
// Answer selection in extractive question answering has long scored the sentences of the retrieved passages by
// the question's words they hold, how close together, and whether they hold the type of answer the question asks
// for; this is that, with the signals retrieval already has: the question's terms and their site spellings and
// related forms (as passage selection counts them), the quantity a "how long" or "how many" question asks for, the
// section heading a unit stands under, and the rank of its passage.

// Evidence is one unit of a retrieved passage (a sentence, a list item, or a table row with its table's header
// row) scored as an answer to the question.
type Evidence struct {
	// Chunk is the unit's passage, its position in Result.Chunks.
	Chunk int
	// Text is the unit as the page writes it, in markdown: a table row follows its header and separator rows.
	Text string
	// Heading is the heading of the section the unit stands in within its passage ("" when none).
	Heading string
	// Cover is the share of the question's terms the unit holds (the quantity one more, when the question asks
	// for one), a term only its context holds (its heading, page title or topic line) counting evidenceContext.
	Cover float64
	// Own is the share of the question's own terms the unit's text holds, heading and title aside.
	Own float64
	// Score orders the units: Cover² times the passage's score as a share of the best passage's (the passage
	// ranking weighed the page, the dense and lexical matches and the passage's coverage, which one sentence's
	// words do not see), less for a unit much longer than a sentence.
	Score float64
	// Matched are the byte ranges of Text holding the question's terms, in order.
	Matched [][2]int
	// Next are the sentences that follow the unit in its paragraph, which often finish what it starts ("The
	// requirement was instituted in 1991" after what the requirement is); none for other units. When the question
	// asks for a kind of answer (a duration, a size, ...) that the unit and the sentence after it do not state and
	// a later sentence does, they start at that one, marked "… " ("… The default value is four megabytes"). A
	// unit that ends its paragraph with a colon is followed by the code block or list items it announces.
	Next []string
	// Before is the sentence before the unit in its paragraph when the unit refers back to it ("This is
	// accomplished by using the command passwd -l user" after what "this" is; see refersBack), else "".
	Before string
	// Anchor is the id that addresses the section of its page the unit stands in (index.Page.Anchors), for a
	// link that opens the page there; "" when the page gives the section none.
	Anchor string
}

// Bounds of evidence units.
const (
	// evidenceMinRunes is the shortest unit kept: shorter lines are labels and headings, not statements.
	evidenceMinRunes = 12
	// evidenceLongRunes is the length past which a unit scores less (about two sentences): a long paragraph holds
	// many words by its length alone.
	evidenceLongRunes = 400
	// evidenceSentenceRunes and evidenceLengthPower make a unit longer than about a sentence score a little less
	// the longer it is, by (evidenceSentenceRunes/length)^evidenceLengthPower (0.96 at 160 runes, 0.83 at 400):
	// a long sentence holds more of the question's words by its length alone, as a long passage does before
	// BM25 normalises its length, and a reader takes a short one in at a glance. On the ten English sets the fact
	// moved into the first 300 characters of eight answers and out of one, as many facts in the answers (one more,
	// one fewer), medians within 90 characters either way, most shorter; on the parallel sets ten more and six
	// fewer in the first 300, three more facts and one fewer. A grid of 60 to 200 runes and powers of 0.1 to 0.3
	// moved the same way.
	evidenceSentenceRunes = 120
	evidenceLengthPower   = 0.15
	// evidenceAnswerType multiplies the score of a unit that holds the kind of answer the question asks for: a
	// number beside the thing a "how many" question counts ("27 units"), or, for "what is X" and "tell me about
	// X", a sentence that says what X is ("Cognitive Science is the cross-disciplinary study of ...").
	evidenceAnswerType = 1.5
	// evidenceKind multiplies the score of a unit that states the kind of answer the question asks for (see
	// questionKind): a duration for "how long", an amount for "how much does it cost". Chosen from a grid of this,
	// the cover's power, the passage rank's power and evidenceContext, on the dev sets, then checked on the
	// held-out and multilingual ones: 2.5 (was 2) gained a fact or a first-300 on seven sets, lost none on twenty.
	evidenceKind = 2.5
	// evidenceDefault multiplies the score of a unit that names a default when the question asks for one (see
	// asksDefault): on the ten English sets 2 and 2.5 held the same two more facts in the first 300 characters
	// (Python dev) and one more in the answer (the Handbook), 1.5 one of these.
	evidenceDefault = 2.0
	// evidenceBound multiplies the score of a unit that states a bound ("at least", "up to", "maximum") when the
	// question asks for one (see asksBound): on the ten English sets 1.5, 2 and 2.5 held one more fact in the
	// answer on PostgreSQL dev and on Python held-out and one more in the first 300 characters on Python dev;
	// 2.5 and 3 also lost a fact on Berkeley held-out.
	evidenceBound = 1.5
	// evidenceCode multiplies the score of a fenced code block: an example shows what a sentence near it says,
	// and a reader takes the sentence in at a glance; unless the question asks for a command, which the block
	// then is.
	evidenceCode = 0.5
	// evidenceLink multiplies the score of a unit that is a link and nothing more (an item of a page's table of
	// contents, "- [E.16. Release 15.5](…)"): it points to an answer rather than states one.
	evidenceLink = 0.5
	// evidenceContext is what a question term counts for when only the unit's heading, page title or topic line
	// (see evidenceUnit.topic) holds it: the unit is about it without naming it again.
	evidenceContext = 0.75
	// evidenceQuantityReach is how many words (stopwords aside) may stand between a quantity and a question
	// word for the quantity to count as the one asked for.
	evidenceQuantityReach = 3
	// evidenceLabelRunes is the longest unit that reads as a value under its heading ("Department Chair" then
	// "Shachar Kariv"): it is read, and shown, with the heading.
	evidenceLabelRunes = 60
	// evidenceSubjectWords is how far into a sentence its subject may run before the verb that defines it.
	evidenceSubjectWords = 12
)

// Evidence returns the units of res's passages that answer its question best, at most max, best first. It reads
// only res (the passages' texts are in it), so it costs no index access.
func (r *Retriever) Evidence(res *Result, max int) []Evidence {
	if res == nil || len(res.Chunks) == 0 || max <= 0 {
		return nil
	}
	off := r.cfg.EvidenceOff
	kind, cues := questionKindIn(res.Lang, res.Query)
	if res.Turn != "" && !continues(res.Turn) {
		// A follow-up that is a question of its own asks for what its words ask for ("what are its opening
		// hours?" after "where is the library?"); one that continues the question before it asks what that one
		// asked ("and for out-of-state students?" after "how much is tuition?").
		kind, cues = questionKindIn(res.Lang, res.Turn)
	}
	if off.Kinds {
		kind, cues = kindNone, nil
	}
	// A Japanese unit is read by its words' bigrams alone: those that join a particle to the next word count for
	// every sentence alike (textnorm.Options.WordBigrams).
	words := textnorm.Options{WordBigrams: true}
	q := &evidenceQuery{passageQuery: r.passageQueryWith(res.Lang, withoutWords(res.Query, cues), words), kind: kind, off: off}
	if res.Turn != "" {
		q.weighTurn(res.Turn)
	}
	if r.cfg.NoQuantities {
		q.quantity = 0
	}
	asked := q.askedTerm(res.Query)
	defines := asksDefinition(res.Query)
	defaults, bounds := asksDefault(res.Lang, res.Query), asksBound(res.Lang, res.Query)
	if off.Shapes {
		asked, defines, defaults, bounds = -1, false, false, false
	}
	titles := make(map[string]string, len(res.Pages))
	for _, p := range res.Pages {
		titles[p.URL] = p.Title
	}
	// Chunks are read best first, and once the best a unit of a chunk could score (a full cover, times every
	// multiplier this question can apply, times the chunk's rank) falls below the max-th best score found, neither
	// that chunk nor any after it can place a unit among those returned: they are not split or scored.
	order := make([]int, len(res.Chunks))
	for i := range order {
		order[i] = i
	}
	top := res.Chunks[0].Score
	ranked := top > 0 && !off.Rank
	if ranked {
		sort.SliceStable(order, func(a, b int) bool { return res.Chunks[order[a]].Score > res.Chunks[order[b]].Score })
	}
	ceiling := evidenceCeiling(kind != kindNone, asked >= 0, defines, defaults, bounds)
	best := make(minScores, 0, min(max, 64))
	var out []Evidence
	for _, i := range order {
		c := res.Chunks[i]
		share := 1.0 // the passage's score as a share of the first passage's
		if ranked {
			share = c.Score / top
		}
		if len(best) == max && ceiling*share*(1+1e-9) < best[0] {
			break
		}
		title := q.mask(titles[c.URL])
		units := evidenceUnits(c.Text)
		for k, u := range units {
			var before uint64 // the terms of the sentence u refers back to (see refersBack)
			back := k > 0 && u.para != 0 && units[k-1].para == u.para && !off.Anaphora && refersBack(res.Lang, u.text)
			if back {
				before = q.mask(withoutTargets(units[k-1].text)) // its words as the unit's own are read
			}
			e := q.score(u, title, before)
			if e.Score > 0 && asked >= 0 && u.header == "" && q.numberBeside(u.text, asked) {
				e.Score *= evidenceAnswerType
			}
			if e.Score > 0 && defines && q.subjectDefined(u.text) {
				e.Score *= evidenceAnswerType
			}
			if e.Score > 0 && defines && opensPage(c.Text, units, k) {
				e.Score *= evidenceAnswerType
			}
			if e.Score == 0 {
				continue
			}
			e.Next = q.next(units, k, e.Text)
			if back {
				e.Before = strings.TrimSpace(units[k-1].text)
			}
			if defaults && statesDefault(res.Lang, u.text) {
				e.Score *= evidenceDefault
			}
			if bounds && statesBound(res.Lang, u.text) {
				e.Score *= evidenceBound
			}
			e.Chunk = i
			e.Score *= share
			out = append(out, e)
			best.add(e.Score, max)
		}
	}
	// Best first; equal scores in the order of the passages and of the units within each.
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score > out[b].Score
		}
		return out[a].Chunk < out[b].Chunk
	})
	out = out[:min(max, len(out))]
	// The section a passage starts in is read from the passages before it once, for all its units before its
	// first heading.
	startsIn := map[int]string{}
	for i := range out {
		c := out[i].Chunk
		if out[i].Heading != "" {
			out[i].Anchor = r.sectionAnchor(res.Chunks[c], out[i].Heading)
			continue
		}
		a, ok := startsIn[c]
		if !ok {
			a = r.sectionAnchor(res.Chunks[c], "")
			startsIn[c] = a
		}
		out[i].Anchor = a
	}
	return out
}

// SectionAnchor is the id of the section passage c starts in, "" when its page gives that section none: the
// section its opening heading begins, or for a passage that opens within a section, the one it continues.
func (r *Retriever) SectionAnchor(c ChunkHit) string {
	heading := ""
	for line := range strings.Lines(c.Text) {
		if t := strings.TrimSpace(line); t != "" {
			for _, h := range markdown.Headings(t) {
				heading = h
			}
			break
		}
	}
	return r.sectionAnchor(c, heading)
}

// sectionAnchor is the id of the section under heading of chunk c's page, "" when it has none. A unit before
// its passage's first heading (heading "") stands in the section the passage starts in: that of the last heading
// of the page's passages before it.
func (r *Retriever) sectionAnchor(c ChunkHit, heading string) string {
	if c.PageID < 0 || c.PageID >= len(r.ix.Pages) || c.ID < 0 || c.ID >= len(r.ix.Chunks) {
		return ""
	}
	p := &r.ix.Pages[c.PageID]
	if p.URL != c.URL || r.ix.Chunks[c.ID].PageID != c.PageID || len(p.Anchors) == 0 {
		return "" // no anchors, or c is of another version of the index than r's
	}
	for ord := r.ix.Chunks[c.ID].Ord - 1; heading == "" && ord >= 0 && ord < len(p.Chunks); ord-- {
		text, err := r.ix.ChunkText(p.Chunks[ord])
		if err != nil {
			return ""
		}
		for _, h := range markdown.Headings(text) {
			heading = h
		}
	}
	if heading == "" {
		return ""
	}
	return p.Anchor(heading)
}

// evidenceCeiling is the most a unit's score can be multiplied by for a question that asks for a kind of answer
// (typed), a number of something (counted), a definition, a default or a bound: a unit's cover is at most one,
// and every other factor of its score (length, code, a bare link) at most one too.
func evidenceCeiling(typed, counted, defines, defaults, bounds bool) float64 {
	c := 1.0
	if typed {
		c *= evidenceKind
	}
	if counted {
		c *= evidenceAnswerType
	}
	if defines {
		c *= evidenceAnswerType * evidenceAnswerType // a subject defined, and a page's opening sentence
	}
	if defaults {
		c *= evidenceDefault
	}
	if bounds {
		c *= evidenceBound
	}
	return c
}

// minScores is a min-heap of the best scores found, at most the number asked for: its root is the score a unit
// must beat to be among them.
type minScores []float64

// add records score among the best n.
func (h *minScores) add(score float64, n int) {
	s := *h
	if len(s) < n {
		s = append(s, score)
		for i := len(s) - 1; i > 0; {
			p := (i - 1) / 2
			if s[p] <= s[i] {
				break
			}
			s[p], s[i] = s[i], s[p]
			i = p
		}
		*h = s
		return
	}
	if score <= s[0] {
		return
	}
	s[0] = score
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(s) && s[l] < s[m] {
			m = l
		}
		if l+1 < len(s) && s[l+1] < s[m] {
			m = l + 1
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
}

// evidenceEarlierTurn is what a term counts for when only the message a follow-up continues holds it: the
// follow-up's own words say what it asks, the earlier message what about, and often what the follow-up replaces
// ("fall 2016" before "and for spring 2017?"). On the follow-up sets (eval/testdata/conversations: the example
// site's first 20, the Berkeley guide's 9) a quarter held the fact in 20 of 20 and 6 of 9 answers, a half in 18
// and 4, the full weight in 17 and 4, none in 17 and 4.
const evidenceEarlierTurn = 0.25

// weighTurn weighs the terms q's follow-up turn does not hold evidenceEarlierTurn (times their own weight).
func (q *passageQuery) weighTurn(turn string) {
	own := q.mask(turn)
	if q.weights == nil {
		q.weights = make([]float64, q.n)
		for i := range q.weights {
			q.weights[i] = 1
		}
	}
	for i := range q.weights {
		if own&(1<<i) == 0 {
			q.weights[i] *= evidenceEarlierTurn
		}
	}
}

// opensPage reports whether units[k] of a passage is the first sentence of the page it opens (text starts with
// the page's title heading): the lead of a page says what its subject is, which "tell me about X" asks ("Cognitive
// Science is the cross-disciplinary study of ..." under "# Cognitive Science").
func opensPage(text string, units []evidenceUnit, k int) bool {
	return strings.HasPrefix(text, "# ") && units[k].para == 1 && (k == 0 || units[k-1].para != 1)
}

// next is the sentences after units[k] in its paragraph (Evidence.Next). When the question asks for a kind of
// answer that neither the unit nor the sentence after it states and a later sentence of the paragraph does, they
// start at that sentence, marked "… ". A unit ending its paragraph with a colon is followed by what it announces
// (leadsInto), and a step of a numbered list by the steps after it (nextSteps).
func (q *evidenceQuery) next(units []evidenceUnit, k int, text string) []string {
	u := units[k]
	end := k + 1
	for u.para != 0 && end < len(units) && units[end].para == u.para {
		end++
	}
	if end == k+1 && markdown.Announces(u.text) {
		return leadsInto(units, k)
	}
	if u.para == 0 && markdown.OrderedItem(u.text) {
		return nextSteps(units, k)
	}
	if u.para == 0 {
		return nil
	}
	from := k + 1
	if q.kind != kindNone && end > k+2 && !q.holdsKind(text) && !q.holdsKind(units[k+1].text) {
		for n := k + 2; n < end; n++ {
			if q.holdsKind(units[n].text) {
				from = n
				break
			}
		}
	}
	if from == end {
		return nil
	}
	out := make([]string, 0, end-from)
	for n := from; n < end; n++ {
		out = append(out, strings.TrimSpace(units[n].text))
	}
	if from > k+1 {
		out[0] = "… " + out[0]
	}
	return out
}

// leadsInto is what a unit ending its paragraph with a colon, or a caption, introduces ("to launch Python 3.7,
// try the command:"; markdown.Announces): the code block, or the list items, right after it in its section.
func leadsInto(units []evidenceUnit, k int) []string {
	var out []string
	for t := range blocksAfter(units, k) {
		code := markdown.FenceLine(t)
		if !code && !markdown.ListItem(t) || code && len(out) > 0 {
			break
		}
		out = append(out, t)
		if code {
			break
		}
	}
	return out
}

// nextSteps is what follows a step of a procedure (units[k], an item of a numbered list): the steps after it in
// its list. A how-to guide's first step rarely does the task alone ("1. Click where you want the table of
// contents." before "2. Choose Insert - Table of Contents and Index"), and a question about the procedure is often
// answered by a later step than the one it matches best ("how long before I can push" after "2. Link your GitHub
// account": "3. Wait about an hour").
func nextSteps(units []evidenceUnit, k int) []string {
	var out []string
	for t := range blocksAfter(units, k) {
		if !markdown.OrderedItem(t) {
			break
		}
		out = append(out, t)
	}
	return out
}

// blocksAfter yields the texts of the units after units[k] in its section, trimmed, while they are blocks of
// their own (list items, code blocks): not sentences of a paragraph, not table rows.
func blocksAfter(units []evidenceUnit, k int) iter.Seq[string] {
	return func(yield func(string) bool) {
		for n := k + 1; n < len(units) && units[n].heading == units[k].heading && units[n].para == 0 && units[n].header == ""; n++ {
			if !yield(strings.TrimSpace(units[n].text)) {
				return
			}
		}
	}
}

// evidenceQuery is a question as evidence selection reads it: its terms, the kind of answer it asks for, and the
// signals switched off.
type evidenceQuery struct {
	*passageQuery
	kind answerKind
	off  EvidenceSignals
	// contexts caches the masks of the headings, topic lines and table header rows the units stand under, each
	// read once rather than once per unit under it.
	contexts map[string]uint64
}

// contextMask is mask(s) for a heading, topic line or header row, cached.
func (q *evidenceQuery) contextMask(s string) uint64 {
	if s == "" {
		return 0
	}
	m, ok := q.contexts[s]
	if !ok {
		m = q.mask(s)
		if q.contexts == nil {
			q.contexts = map[string]uint64{}
		}
		q.contexts[s] = m
	}
	return m
}

// score scores unit u for q; title is the mask of the terms of the unit's page title, before that of the sentence
// u refers back to (0 when it does not): that sentence's terms count as the unit's own in its cover, not in Own.
func (q *evidenceQuery) score(u evidenceUnit, title, before uint64) Evidence {
	e := Evidence{Text: u.text, Heading: u.heading}
	prefix := ""
	switch {
	case u.header != "":
		prefix = u.header + "\n" + tableSeparator(u.header) + "\n"
	case u.label:
		prefix = "**" + u.heading + "**\n"
	}
	e.Text = prefix + u.text
	if q.n == 0 {
		return e
	}
	own, matched := q.matches(withoutTargets(u.text))
	if u.header != "" {
		own |= q.contextMask(u.header)
	}
	if u.label {
		own |= q.contextMask(u.heading)
	}
	if own&q.quantity != 0 && !q.quantityNear(u.text) {
		own &^= q.quantity // a number far from every question word is some other quantity
	}
	context := (q.contextMask(u.heading) | q.contextMask(u.topic) | title) &^ own &^ q.quantity
	if q.off.Context {
		context = 0
	}
	before &^= own | context | q.quantity
	typed := q.kind != kindNone && (own&^q.quantity != 0 || context|before != 0) && q.holdsKind(e.Text)
	if (own|before)&^q.quantity == 0 && (!typed || context == 0) {
		// A unit that holds none of the question's words, by itself or by the sentence it refers back to,
		// answers nothing, whatever its heading says, unless it states the kind of answer asked for and its
		// heading, title or topic line names one of them.
		return e
	}
	all := uint64(1)<<q.n - 1
	terms := q.weigh(all)
	if q.quantity != 0 {
		terms++
	}
	e.Cover = (q.weigh(own) + evidenceContext*q.weigh(context) + q.weigh(before)) / terms
	e.Own = q.weigh(own&^q.quantity) / q.weigh(all)
	e.Score = e.Cover * e.Cover
	if typed {
		e.Score *= evidenceKind
	}
	n := utf8.RuneCountInString(u.text)
	switch {
	case markdown.FenceLine(u.text) && !q.off.Code && q.kind != kindCommand:
		e.Score *= evidenceCode
	case onlyLink(u.text):
		e.Score *= evidenceLink
	case n > evidenceLongRunes && !q.off.Length:
		e.Score *= math.Sqrt(float64(evidenceLongRunes) / float64(n))
	}
	if n > evidenceSentenceRunes && !q.off.Length {
		e.Score *= math.Pow(float64(evidenceSentenceRunes)/float64(n), evidenceLengthPower)
	}
	for i := range matched { // the ranges are in the unit's text, which the prefix moves
		matched[i][0] += len(prefix)
		matched[i][1] += len(prefix)
	}
	e.Matched = matched
	return e
}

// quantityNear reports whether text holds a quantity within evidenceQuantityReach words of one of the question's
// own words ("27 units" for "how many units"), the place where the quantity asked for stands.
func (q *passageQuery) quantityNear(text string) bool {
	last := map[bool]int{true: -1 << 30, false: -1 << 30} // word positions of the last quantity, the last term
	pos, near := 0, false
	q.buf = textnorm.AppendWords(q.buf, text, func(w []byte) bool {
		i := q.term(w)
		if i == stopword {
			return true
		}
		isQ, isTerm := i == q.n, i >= 0 && i < q.n
		if isQ && statesNumber(w) && pos-last[false] <= evidenceQuantityReach {
			near = true
		}
		if isTerm && pos-last[true] <= evidenceQuantityReach {
			near = true
		}
		if isQ && statesNumber(w) {
			last[true] = pos
		} else if isTerm {
			last[false] = pos
		}
		pos++
		return !near
	})
	return near
}

// mask returns the bits of the question terms (and the quantity) text holds.
func (q *passageQuery) mask(text string) uint64 {
	m, _ := q.matches(text)
	return m
}

// matches returns the bits of the question terms (and the quantity) text holds, and the byte ranges of the words
// that hold them.
func (q *passageQuery) matches(text string) (uint64, [][2]int) {
	var (
		m      uint64
		ranges [][2]int
	)
	if text == "" || q.n == 0 {
		return 0, nil
	}
	// Words are read a whitespace-separated token at a time, so that each match has its token's place.
	for start := 0; start < len(text); {
		for start < len(text) && isSpace(text[start]) {
			start++
		}
		end := start
		for end < len(text) && !isSpace(text[end]) {
			end++
		}
		hit := false
		token := text[start:end]
		if q.lang != nil {
			token = q.lang.Normalize(token)
		}
		q.buf = textnorm.AppendWords(q.buf, token, func(w []byte) bool {
			if q.lang != nil { // every term of the word: a CJK run holds many
				for _, i := range q.langTerms(w) {
					if i >= 0 {
						m |= 1 << i
						hit = true
					}
				}
				return true
			}
			if i := q.term(w); i >= 0 {
				m |= 1 << i
				hit = true
			}
			return true
		})
		if hit {
			ranges = append(ranges, [2]int{start, end})
		}
		start = end
	}
	return m, ranges
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// onlyLink reports whether text, a list item's marker aside, is one markdown link and nothing else.
func onlyLink(text string) bool {
	t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(text), "-*+"))
	if !strings.HasPrefix(t, "[") {
		return false // most units: no link opens them
	}
	for l := range markdown.Links(t) {
		return l.Start == 0 && l.End == len(t)
	}
	return false
}

// withoutTargets is text with the targets of its links blanked out, byte for byte: a unit holds the words it
// shows, not those of a URL it links to ("[Continue Reading](…/Danny_Angus_Infra_VP.html)" names no one).
func withoutTargets(text string) string {
	if !strings.Contains(text, "](") {
		return text
	}
	var b []byte
	for l := range markdown.Links(text) {
		if b == nil {
			b = []byte(text)
		}
		from := l.Start + 1 + len(l.Text) + 1 // after the "]" that ends the link's text
		for i := from; i < l.End; i++ {
			b[i] = ' '
		}
	}
	if b == nil {
		return text
	}
	return string(b)
}
