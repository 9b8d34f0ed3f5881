package insights

import (
	"fmt"
	"regexp"
)

// Mode says what the question log keeps of a question.
type Mode int

const (
	// Redacted keeps questions with e-mail addresses, phone numbers, card-like numbers and long digit runs
	// replaced. The default.
	Redacted Mode = iota
	// Full keeps questions as asked.
	Full
	// Off keeps no questions.
	Off
)

// ParseMode reads a Mode by name: "redacted", "full" or "off".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "redacted", "":
		return Redacted, nil
	case "full":
		return Full, nil
	case "off":
		return Off, nil
	}
	return 0, fmt.Errorf("question log %q: want redacted, full or off", s)
}

// String returns the mode's name.
func (m Mode) String() string {
	switch m {
	case Full:
		return "full"
	case Off:
		return "off"
	}
	return "redacted"
}

// The replacements Redact puts where personal data was.
const (
	RedactedEmail  = "[email]"
	RedactedCard   = "[card]"
	RedactedPhone  = "[phone]"
	RedactedNumber = "[number]"
)

var (
	emailPattern = regexp.MustCompile(`(?i)[a-z0-9._%+\-]+@[a-z0-9\-]+(?:\.[a-z0-9\-]+)*\.[a-z]{2,}`)
	// Card numbers are 13 to 19 digits (ISO/IEC 7812), often in groups of four split by spaces or dashes.
	cardPattern = regexp.MustCompile(`\b\d(?:[ \-]?\d){12,18}\b`)
	// Phone numbers: an optional +country code, then at least seven digits with the separators people type
	// (spaces, dots, dashes, parentheses).
	phonePattern = regexp.MustCompile(`(?:\+\d{1,3}[ .\-]?)?(?:\(\d{1,4}\)[ .\-]?)?\d{2,4}(?:[ .\-]\d{2,4}){1,4}`)
	// A run of six or more digits (student and account numbers, dates of birth written together).
	digitsPattern = regexp.MustCompile(`\d{6,}`)
)

// Redact replaces e-mail addresses, card-like numbers, phone numbers and runs of six or more digits in s. A
// number of digits split by separators counts as a phone number only when it holds seven digits or more, so
// years, times and short course numbers ("CS 61B", "9:30", "2016-17") stay.
func Redact(s string) string {
	if !needsRedaction(s) {
		return s
	}
	s = emailPattern.ReplaceAllString(s, RedactedEmail)
	s = cardPattern.ReplaceAllString(s, RedactedCard)
	s = phonePattern.ReplaceAllStringFunc(s, func(m string) string {
		if countDigits(m) < 7 {
			return m
		}
		return RedactedPhone
	})
	return digitsPattern.ReplaceAllString(s, RedactedNumber)
}

// needsRedaction is a quick test that spares most questions the regular expressions: those with no '@' and
// fewer than six digits hold nothing Redact replaces.
func needsRedaction(s string) bool {
	digits := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '@':
			return true
		case '0' <= c && c <= '9':
			digits++
			if digits >= 6 {
				return true
			}
		}
	}
	return false
}

func countDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if '0' <= s[i] && s[i] <= '9' {
			n++
		}
	}
	return n
}
