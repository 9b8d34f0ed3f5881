package insights

import "testing"

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"What are the library hours?", "What are the library hours?"},
		{"Is CS 61B offered in 2016-17 at 9:30?", "Is CS 61B offered in 2016-17 at 9:30?"},
		{"Mail me at jane.doe+x@berkeley.edu please", "Mail me at [email] please"},
		{"Call me on +1 (510) 642-6000", "Call me on [phone]"},
		{"my number is 510.642.6000", "my number is [phone]"},
		{"card 4111 1111 1111 1111 was charged", "card [card] was charged"},
		{"card 4111-1111-1111-1111", "card [card]"},
		{"student id 3031234567 lost", "student id [number] lost"},
		{"ticket 123456", "ticket [number]"},
		{"room 12345", "room 12345"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, s := range []string{"redacted", "full", "off"} {
		m, err := ParseMode(s)
		if err != nil || m.String() != s {
			t.Errorf("ParseMode(%q) = %v, %v", s, m, err)
		}
	}
	if _, err := ParseMode("some"); err == nil {
		t.Error("ParseMode accepted an unknown mode")
	}
}
