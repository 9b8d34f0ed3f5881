package retrieval

// questionSynonyms maps the words people ask with to the words organisations' pages tend to write, for the
// common question shapes (dates, costs, contacts, who runs what, where). Query expansion adds an entry's words
// only when the site uses them, so a site that says "starts" keeps its own word. Keys are lowercase words or
// two-word phrases; plain English, nothing site-specific.
var questionSynonyms = map[string][]string{
	// When does something happen?
	"start":      {"begins", "first"},
	"starts":     {"begins", "first"},
	"begin":      {"begins", "first"},
	"graduation": {"commencement"},
	"finals":     {"final", "examinations", "exams"},
	"break":      {"recess", "holiday"},
	"vacation":   {"recess", "holiday"},
	"when":       {"date"},
	"due":        {"deadline"},
	// How much does it cost?
	"cost":      {"fee", "fees", "charge"},
	"costs":     {"fee", "fees", "charge"},
	"price":     {"fee", "cost"},
	"pay":       {"fee", "fees", "cost"},
	"expensive": {"fee", "cost"},
	// How do I reach someone?
	"phone":   {"telephone"},
	"call":    {"phone", "telephone"},
	"contact": {"phone", "email"},
	"email":   {"e-mail"},
	"wifi":    {"wi-fi", "wireless"},
	// Who runs or teaches it?
	"in charge": {"chair", "director", "head", "dean"},
	"head":      {"chair", "director", "dean"},
	"heads":     {"chair", "director", "dean"},
	"boss":      {"chair", "director", "dean"},
	"leads":     {"chair", "director"},
	"runs":      {"chair", "director"},
	"teaches":   {"instructor"},
	"teach":     {"instructor"},
	"prof":      {"professor", "faculty"},
	"professor": {"faculty"},
	// Where is it?
	"where":   {"location", "located"},
	"located": {"location", "hall"},
	"office":  {"location"},
	// Other everyday words.
	"class":   {"course"},
	"classes": {"courses"},
	"job":     {"employment", "career"},
	"jobs":    {"employment", "careers"},
	"live":    {"housing", "residence"},
	"dorm":    {"housing", "residence"},
	"need":    {"required", "requirements"},
}

// synonyms returns the words questionSynonyms adds for q's words and word pairs, in order, without repeats and
// without words q already has; known reports whether the site uses a word.
func synonyms(q string, known func(w string) bool) []string {
	words := questionWords(q)
	have := map[string]bool{}
	for _, w := range words {
		have[w] = true
	}
	var out []string
	add := func(key string) {
		for _, s := range questionSynonyms[key] {
			if !have[s] && known(s) {
				have[s] = true
				out = append(out, s)
			}
		}
	}
	for i, w := range words {
		if i+1 < len(words) {
			add(w + " " + words[i+1])
		}
		add(w)
	}
	return out
}
