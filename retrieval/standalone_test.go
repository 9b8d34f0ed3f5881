package retrieval

import "testing"

func TestStandaloneAndChitchat(t *testing.T) {
	user := func(texts ...string) []Message {
		var msgs []Message
		for i, s := range texts {
			if i > 0 {
				msgs = append(msgs, Message{Role: "assistant", Content: "An answer."})
			}
			msgs = append(msgs, Message{Role: "user", Content: s})
		}
		return msgs
	}
	for _, tc := range []struct {
		msgs                 []Message
		standalone, chitchat bool
	}{
		{user("how much is in-state tuition per semester?"), true, false},
		{user("Is there a deadline for the FAFSA?"), true, false},
		{user("how many units is one course?"), true, false},
		{user("how much does it cost?"), false, false},
		{user("who teaches those classes"), false, false},
		{user("and for grad students?"), false, false},
		{user("What about fall?"), false, false},
		{user("Und für Masterstudierende?"), false, false},
		{user("¿Y los sábados?"), false, false},
		{user("Was ist die Frist für die Anmeldung?"), true, false},
		{user("Quel est le délai d'inscription ?"), true, false},
		{user("what is tuition?", "how much is in-state tuition per semester?"), false, false},
		{user("hello there!"), false, true},
		{user("what is tuition?", "Thanks a lot!"), false, true},
		{user("   "), false, false},
		{nil, false, false},
	} {
		last := ""
		if len(tc.msgs) > 0 {
			last = tc.msgs[len(tc.msgs)-1].Content
		}
		if got := (Heuristic{}).StandsAlone(tc.msgs); got != tc.standalone {
			t.Errorf("StandsAlone(%d turns, %q) = %v, want %v", len(tc.msgs), last, got, tc.standalone)
		}
		if got := (Heuristic{}).Chitchat(tc.msgs); got != tc.chitchat {
			t.Errorf("Chitchat(%q) = %v, want %v", last, got, tc.chitchat)
		}
	}
}
