package retrieval

import "testing"

func TestAsksQuantity(t *testing.T) {
	for q, want := range map[string]bool{
		"how long is the password reset link good for":  true,
		"How many units can I take?":                    true,
		"max size of a single text value in postgres?":  true,
		"what number does logging.ERROR correspond to":  true,
		"whats the shortest password i can set":         true,
		"When is the add/drop deadline?":                true,
		"which version added the walrus operator":       true,
		"autovacuum_vacuum_scale_factor default value?": true,
		"how do i reset my password":                    false,
		"when i push to main the build fails, why":      false,
		"what is a maximal munch parser":                false, // "maximal" is not "maximum"
		"who is the chair of linguistics":               false,
		"what does max_connections do":                  false, // a name, not the word "max"
		"how":                                           false,
	} {
		if got := asksQuantity(q); got != want {
			t.Errorf("asksQuantity(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestIsQuantity(t *testing.T) {
	for w, want := range map[string]bool{"40": true, "1gb": true, "2022-10-13": true, "15.1": true, "four": true,
		"hundred": true, "error": false, "hours": false, "forty-two": false, "": false} {
		if got := isQuantity([]byte(w)); got != want {
			t.Errorf("isQuantity(%q) = %v, want %v", w, got, want)
		}
	}
}

// A question asking for a quantity prefers the passage that states one: both passages below hold the question's
// terms alike, and only the one with the number holds its answer.
func TestPassageQuantity(t *testing.T) {
	stated := "The password reset link is valid for 24 hours."
	named := "The password reset link is valid only once, from the address you gave."
	q := newPassageQuery("how long is the password reset link valid", nil) // long, password, reset, link, valid
	if q.quantity == 0 {
		t.Fatal("the question asks for a quantity, but the passage query counts none")
	}
	sp, sq := q.coverage(stated)
	np, nq := q.coverage(named)
	if sq != 0.8 || nq != 0.8 {
		t.Errorf("question coverage %v and %v, want 0.8 for both (the quantity is no question term)", sq, nq)
	}
	if want := 5.0 / 6; sp != want || np != 4.0/6 {
		t.Errorf("passage coverage: stated %v (want %v), named %v (want %v)", sp, want, np, 4.0/6)
	}
	// A question asking for none counts no number.
	q = newPassageQuery("is the password reset link valid", nil)
	if p, c := q.coverage(stated); p != c || q.quantity != 0 {
		t.Errorf("no quantity asked: passage coverage %v, question coverage %v, want them equal", p, c)
	}
	// A number the question writes is its own term, not the quantity: "61b" counts once.
	q = newPassageQuery("how many units is cs 61b", nil) // mani, unit, cs, 61b
	if p, c := q.coverage("CS 61B, in units of study."); p != 3.0/5 || c != 3.0/4 {
		t.Errorf("a number as a question term: coverage %v and %v, want %v and %v", p, c, 3.0/5, 3.0/4)
	}
	if p, _ := q.coverage("CS 61B is 4 units."); p != 4.0/5 {
		t.Errorf("with a quantity: passage coverage %v, want %v", p, 4.0/5)
	}
}
