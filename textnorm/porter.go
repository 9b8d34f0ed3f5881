package textnorm

// Stem returns the Porter stem of a lowercase ASCII word (M.F. Porter, "An algorithm for suffix stripping",
// Program 14(3), 1980, with the commonly adopted "logi" -> "log" step-2 rule). Words of two letters or fewer,
// and words containing anything but ASCII letters, are returned unchanged, so numbers, codes such as "cs61a"
// and non-English words pass through. Stem allocates only when it shortens or changes the word.
func Stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	var buf [64]byte
	var b []byte
	if len(w) <= len(buf) {
		b = append(buf[:0], w...)
	} else {
		b = []byte(w)
	}
	s := porter{b: b}
	s.step1ab()
	if len(s.b) > 1 {
		s.step1c()
		s.step2()
		s.step3()
		s.step4()
		s.step5()
	}
	if string(s.b) == w {
		return w
	}
	return string(s.b)
}

type porter struct {
	b []byte
	j int // end of the stem under consideration (exclusive) after a successful ends()
}

// cons reports whether b[i] is a consonant.
func (p *porter) cons(i int) bool {
	switch p.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !p.cons(i-1)
	}
	return true
}

// m measures the number of consonant-vowel sequences in b[:j].
func (p *porter) m() int {
	n, i := 0, 0
	j := p.j
	for {
		if i >= j {
			return n
		}
		if !p.cons(i) {
			break
		}
		i++
	}
	i++
	for {
		for {
			if i >= j {
				return n
			}
			if p.cons(i) {
				break
			}
			i++
		}
		i++
		n++
		for {
			if i >= j {
				return n
			}
			if !p.cons(i) {
				break
			}
			i++
		}
		i++
	}
}

// vowelInStem reports whether b[:j] contains a vowel.
func (p *porter) vowelInStem() bool {
	for i := 0; i < p.j; i++ {
		if !p.cons(i) {
			return true
		}
	}
	return false
}

// doublec reports whether b[i-1:i+1] is a double consonant.
func (p *porter) doublec(i int) bool {
	return i >= 1 && p.b[i] == p.b[i-1] && p.cons(i)
}

// cvc reports whether b[i-2:i+1] is consonant-vowel-consonant with the last not w, x or y.
func (p *porter) cvc(i int) bool {
	if i < 2 || !p.cons(i) || p.cons(i-1) || !p.cons(i-2) {
		return false
	}
	switch p.b[i] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

func (p *porter) ends(s string) bool {
	n := len(s)
	if n > len(p.b) || string(p.b[len(p.b)-n:]) != s {
		return false
	}
	p.j = len(p.b) - n
	return true
}

// setTo replaces b[j:] with s.
func (p *porter) setTo(s string) { p.b = append(p.b[:p.j], s...) }

func (p *porter) r(s string) {
	if p.m() > 0 {
		p.setTo(s)
	}
}

func (p *porter) step1ab() {
	if p.b[len(p.b)-1] == 's' {
		switch {
		case p.ends("sses"):
			p.b = p.b[:len(p.b)-2]
		case p.ends("ies"):
			p.setTo("i")
		case len(p.b) >= 2 && p.b[len(p.b)-2] != 's':
			p.b = p.b[:len(p.b)-1]
		}
	}
	if p.ends("eed") {
		if p.m() > 0 {
			p.b = p.b[:len(p.b)-1]
		}
		return
	}
	if (p.ends("ed") || p.ends("ing")) && p.vowelInStem() {
		p.b = p.b[:p.j]
		p.j = len(p.b)
		switch {
		case p.ends("at"):
			p.setTo("ate")
		case p.ends("bl"):
			p.setTo("ble")
		case p.ends("iz"):
			p.setTo("ize")
		case p.doublec(len(p.b) - 1):
			switch p.b[len(p.b)-1] {
			case 'l', 's', 'z':
			default:
				p.b = p.b[:len(p.b)-1]
			}
		default:
			p.j = len(p.b)
			if p.m() == 1 && p.cvc(len(p.b)-1) {
				p.b = append(p.b, 'e')
			}
		}
	}
}

func (p *porter) step1c() {
	if p.ends("y") && p.vowelInStem() {
		p.b[len(p.b)-1] = 'i'
	}
}

func (p *porter) step2() {
	if len(p.b) < 2 {
		return
	}
	switch p.b[len(p.b)-2] {
	case 'a':
		if p.ends("ational") {
			p.r("ate")
		} else if p.ends("tional") {
			p.r("tion")
		}
	case 'c':
		if p.ends("enci") {
			p.r("ence")
		} else if p.ends("anci") {
			p.r("ance")
		}
	case 'e':
		if p.ends("izer") {
			p.r("ize")
		}
	case 'l':
		switch {
		case p.ends("bli"):
			p.r("ble")
		case p.ends("alli"):
			p.r("al")
		case p.ends("entli"):
			p.r("ent")
		case p.ends("eli"):
			p.r("e")
		case p.ends("ousli"):
			p.r("ous")
		}
	case 'o':
		switch {
		case p.ends("ization"):
			p.r("ize")
		case p.ends("ation"):
			p.r("ate")
		case p.ends("ator"):
			p.r("ate")
		}
	case 's':
		switch {
		case p.ends("alism"):
			p.r("al")
		case p.ends("iveness"):
			p.r("ive")
		case p.ends("fulness"):
			p.r("ful")
		case p.ends("ousness"):
			p.r("ous")
		}
	case 't':
		switch {
		case p.ends("aliti"):
			p.r("al")
		case p.ends("iviti"):
			p.r("ive")
		case p.ends("biliti"):
			p.r("ble")
		}
	case 'g':
		if p.ends("logi") {
			p.r("log")
		}
	}
}

func (p *porter) step3() {
	switch p.b[len(p.b)-1] {
	case 'e':
		switch {
		case p.ends("icate"):
			p.r("ic")
		case p.ends("ative"):
			p.r("")
		case p.ends("alize"):
			p.r("al")
		}
	case 'i':
		if p.ends("iciti") {
			p.r("ic")
		}
	case 'l':
		if p.ends("ical") {
			p.r("ic")
		} else if p.ends("ful") {
			p.r("")
		}
	case 's':
		if p.ends("ness") {
			p.r("")
		}
	}
}

func (p *porter) step4() {
	if len(p.b) < 2 {
		return
	}
	var ok bool
	switch p.b[len(p.b)-2] {
	case 'a':
		ok = p.ends("al")
	case 'c':
		ok = p.ends("ance") || p.ends("ence")
	case 'e':
		ok = p.ends("er")
	case 'i':
		ok = p.ends("ic")
	case 'l':
		ok = p.ends("able") || p.ends("ible")
	case 'n':
		ok = p.ends("ant") || p.ends("ement") || p.ends("ment") || p.ends("ent")
	case 'o':
		ok = (p.ends("ion") && p.j > 0 && (p.b[p.j-1] == 's' || p.b[p.j-1] == 't')) || p.ends("ou")
	case 's':
		ok = p.ends("ism")
	case 't':
		ok = p.ends("ate") || p.ends("iti")
	case 'u':
		ok = p.ends("ous")
	case 'v':
		ok = p.ends("ive")
	case 'z':
		ok = p.ends("ize")
	}
	if ok && p.m() > 1 {
		p.b = p.b[:p.j]
	}
}

func (p *porter) step5() {
	p.j = len(p.b)
	if p.b[len(p.b)-1] == 'e' {
		p.j = len(p.b) - 1
		a := p.m()
		if a > 1 || (a == 1 && !p.cvc(len(p.b)-2)) {
			p.b = p.b[:len(p.b)-1]
		}
	}
	p.j = len(p.b)
	if p.b[len(p.b)-1] == 'l' && p.doublec(len(p.b)-1) && p.m() > 1 {
		p.b = p.b[:len(p.b)-1]
	}
}
