package embedding

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/textnorm"
)

var fitTexts = []string{
	"The Bioengineering major requires 42 upper division units.",
	"Undergraduate tuition and fees for 2016-17 are $13,510 for California residents.",
	"Instruction begins Wednesday, August 24, 2016 for the Fall semester.",
	"The Cognitive Science major is a cross-disciplinary study of the mind.",
	"International students pay an $80 application fee; fee waivers are available.",
	"A grade of Incomplete lapses to F unless the course work is completed; exceptions for a maximum of two courses.",
	"The College of Letters & Science (L&S) sets breadth requirements for all its students.",
	"Contact the Office of the Registrar at 510-642-1483.",
}

// background gives FitLocal a realistic document frequency for common words and suffixes ("-tion", "-ment",
// "student"), as a real site does; the robustness checks are about the texts in fitTexts.
var background = []string{
	"Students should consult their advisor about course selection and registration.",
	"The department offers information sessions for prospective students each semester.",
	"Application materials must be submitted through the online admission portal.",
	"International education programs provide opportunities for study abroad.",
	"Graduate students complete a dissertation under the supervision of a faculty committee.",
	"The university administration publishes policies on academic integrity and conduct.",
	"Requirements for the minor include five upper division courses in the department.",
	"Registration instructions and enrollment deadlines are published by the registrar.",
	"Financial aid applications are reviewed for eligibility and documentation.",
	"The committee evaluates petitions for exceptions to the residence requirement.",
	"Courses in this program emphasize research, communication and quantitative reasoning.",
	"Orientation sessions introduce new students to campus organizations and services.",
	"The library provides instruction in information literacy and research methods.",
	"Departmental honors require a thesis and a minimum grade point average.",
	"Laboratory sections meet weekly; attendance is required for all enrolled students.",
	"The foundation supports scholarships for students in engineering and the sciences.",
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func embedOne(t *testing.T, e Embedder, texts ...string) [][]float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != len(texts) {
		t.Fatalf("Embed returned %d rows for %d texts", len(v), len(texts))
	}
	return v
}

func TestLocalUnitLengthAndDimension(t *testing.T) {
	for _, dim := range []int{0, 64, 1024} {
		l := FitLocal(fitTexts, LocalConfig{Dimension: dim})
		want := dim
		if dim == 0 {
			want = 256
		}
		if l.Dimension() != want {
			t.Errorf("Dimension() = %d, want %d", l.Dimension(), want)
		}
		for i, v := range embedOne(t, l, append(fitTexts, "zzqx unseen words only")...) {
			if len(v) != want {
				t.Fatalf("row %d has %d elements, want %d", i, len(v), want)
			}
			if n := dot(v, v); math.Abs(n-1) > 1e-5 {
				t.Errorf("dim %d row %d: squared norm %v, want 1", dim, i, n)
			}
		}
	}
}

func TestLocalEmptyTextIsZero(t *testing.T) {
	l := FitLocal(fitTexts, LocalConfig{})
	for _, text := range []string{"", "   ", "the of and", "!!!"} {
		v := embedOne(t, l, text)[0]
		if n := dot(v, v); n != 0 {
			t.Errorf("Embed(%q) has squared norm %v, want 0", text, n)
		}
	}
}

// TestLocalRobustness checks the property the embedder exists for: a query with misspellings, abbreviations or
// other inflections is closer to the text it means than to the other texts.
func TestLocalRobustness(t *testing.T) {
	l := FitLocal(append(append([]string(nil), fitTexts...), background...), LocalConfig{})
	docs := embedOne(t, l, fitTexts...)
	tests := []struct {
		query string
		want  int // index into fitTexts
	}{
		{"bioengneering upper div unit", 0},
		{"undergrad tution", 1},
		{"when does instrucion begin in fall", 2},
		{"cogsci cognitive sci majr", 3},
		{"application fees international", 4},
		{"incompletes turning into an F", 5},
		{"L&S breadth requirement", 6},
		{"registrar phone number 510-642-1483", 7},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			q := embedOne(t, l, tt.query)[0]
			best, bestScore := -1, -2.0
			for i, d := range docs {
				if s := dot(q, d); s > bestScore {
					best, bestScore = i, s
				}
			}
			if best != tt.want {
				t.Errorf("nearest text is %d (%q, %.3f), want %d (%.3f)", best, fitTexts[best], bestScore, tt.want, dot(q, docs[tt.want]))
			}
		})
	}
}

func TestLocalDeterministic(t *testing.T) {
	// Fitting in parallel and embedding in parallel must not change a single bit.
	many := make([]string, 0, 400)
	for len(many) < 400 {
		many = append(many, fitTexts...)
	}
	a := FitLocal(many, LocalConfig{Dimension: 256})
	b := FitLocal(many, LocalConfig{Dimension: 256})
	va, vb := embedOne(t, a, many...), embedOne(t, b, many...)
	if diff := cmp.Diff(va, vb); diff != "" {
		t.Fatalf("two fits differ (-a +b):\n%s", diff)
	}
	single := embedOne(t, a, many[5])[0]
	if diff := cmp.Diff(va[5], single); diff != "" {
		t.Errorf("batch and single embedding differ (-batch +single):\n%s", diff)
	}
}

func TestLocalIDF(t *testing.T) {
	// A word in every text says less than a rare one, so a query sharing only the common word with a text is
	// further from it than a query sharing only the rare word.
	texts := []string{"guide apple", "guide banana", "guide cherry", "guide durian"}
	l := FitLocal(texts, LocalConfig{})
	v := embedOne(t, l, "guide apple", "guide", "apple")
	if common, rare := dot(v[0], v[1]), dot(v[0], v[2]); !(rare > common) {
		t.Errorf("cos(doc, common word) = %.3f, cos(doc, rare word) = %.3f; want rare > common", common, rare)
	}
	// Hash collisions make equal weights only approximately equal; a wide vector keeps them rare.
	u := NewLocal(LocalConfig{Dimension: 4096})
	w := embedOne(t, u, "guide apple", "guide", "apple")
	if a, b := dot(w[0], w[1]), dot(w[0], w[2]); math.Abs(a-b) > 0.05 {
		t.Errorf("unfitted embedder weighs words unequally: %.3f vs %.3f", a, b)
	}
}

func TestLocalMarshalRoundTrip(t *testing.T) {
	for _, l := range []*Local{FitLocal(fitTexts, LocalConfig{Dimension: 128, MinGram: 2, MaxGram: 4}), NewLocal(LocalConfig{}),
		FitLocal(multilingualTexts, LocalConfig{Languages: []string{"fr-FR", "en", "ja"}}), NewLocal(LocalConfig{Languages: []string{"de"}})} {
		data, err := l.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var got Local
		if err := got.UnmarshalBinary(data); err != nil {
			t.Fatal(err)
		}
		if got.Name() != l.Name() {
			t.Errorf("Name() = %q after round trip, want %q", got.Name(), l.Name())
		}
		if diff := cmp.Diff(embedOne(t, l, append(fitTexts, multilingualTexts...)...), embedOne(t, &got, append(fitTexts, multilingualTexts...)...)); diff != "" {
			t.Errorf("vectors differ after round trip (-before +after):\n%s", diff)
		}
	}
}

func TestLocalUnmarshalRejects(t *testing.T) {
	good, _ := FitLocal(fitTexts, LocalConfig{Dimension: 64, IDFBuckets: 16}).MarshalBinary()
	bad := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	tests := map[string][]byte{
		"empty":       nil,
		"magic":       bad(func(b []byte) []byte { b[0] = 'X'; return b }),
		"version":     bad(func(b []byte) []byte { b[4] = 9; return b }),
		"truncated":   good[:len(good)-1],
		"extra":       append(append([]byte(nil), good...), 0),
		"zero dim":    bad(func(b []byte) []byte { copy(b[5:9], []byte{0, 0, 0, 0}); return b }),
		"many hashes": bad(func(b []byte) []byte { copy(b[17:21], []byte{0, 0, 0, 0x7f}); return b }),
		"huge bucket": bad(func(b []byte) []byte { copy(b[21:25], []byte{0, 0, 0, 0x7f}); return b }),
	}
	for name, data := range tests {
		t.Run(name, func(t *testing.T) {
			var l Local
			if err := l.UnmarshalBinary(data); !errors.Is(err, ErrBadState) {
				t.Errorf("UnmarshalBinary error = %v, want ErrBadState", err)
			}
		})
	}
}

func TestLocalEmbedCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	texts := make([]string, 1000)
	if _, err := NewLocal(LocalConfig{}).Embed(ctx, texts); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed error = %v, want context.Canceled", err)
	}
}

func FuzzLocalUnmarshal(f *testing.F) {
	good, _ := FitLocal(fitTexts, LocalConfig{Dimension: 32, IDFBuckets: 8}).MarshalBinary()
	f.Add(good)
	f.Add([]byte("RPLE\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var l Local
		if l.UnmarshalBinary(data) != nil {
			return
		}
		v, err := l.Embed(context.Background(), []string{"bioengineering units", "x"})
		if err != nil || len(v[0]) != l.Dimension() {
			t.Fatalf("embedder from accepted state fails: %v", err)
		}
	})
}

func TestFitEmbedEqualsFitThenEmbed(t *testing.T) {
	many := make([]string, 0, 500)
	for i := 0; len(many) < 500; i++ {
		many = append(many, fitTexts[i%len(fitTexts)]+" "+background[i%len(background)])
	}
	// Texts that share everything after their first line (ingest's "title > headings" over a chunk that pages
	// repeat), more than a group holds, and repeated texts.
	for i := range 3 * maxGroup {
		many = append(many, fmt.Sprintf("Page %d > Courses", i%(2*maxGroup))+"\n"+fitTexts[i%2]+"\n"+background[i%3])
	}
	many = append(many, "", "the of", many[3], "", many[3], many[len(many)-1])
	// Texts in other languages, some sharing a rest with a text in another language.
	for i, rest := range multilingualTexts {
		many = append(many, fmt.Sprintf("Seite %d", i)+"\n"+rest, "Page > Cours\n"+rest, "Page > Cours\n"+fitTexts[0])
	}
	groups, firstOf, err := groupTexts(len(many), func(i int) (string, error) { return many[i], nil }, func(string) *textnorm.Language { return nil })
	if err != nil {
		t.Fatal(err)
	}
	shared, copied := 0, 0
	for _, g := range groups {
		if len(g.texts) > 1 {
			shared++
		}
		for _, x := range g.texts {
			copied += int(x.copies) - 1
		}
	}
	if shared < 2 || copied < 4 || firstOf[len(firstOf)-1] == len(firstOf)-1 {
		t.Fatalf("%d groups share a rest and %d texts are copies: the test needs both", shared, copied)
	}
	for _, cfg := range []LocalConfig{{}, {Dimension: 100, Hashes: 3, MinGram: 2, MaxGram: 4},
		{Languages: []string{"de", "en", "fr", "ja"}}} {
		l, got, err := FitEmbed(context.Background(), many, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ref := FitLocal(many, cfg)
		if diff := cmp.Diff(ref.idf, l.idf); diff != "" {
			t.Errorf("IDF differs from FitLocal (-FitLocal +FitEmbed):\n%s", diff)
		}
		if diff := cmp.Diff(embedOne(t, ref, many...), got); diff != "" {
			t.Errorf("vectors differ from FitLocal+Embed (-want +got):\n%s", diff)
		}
		// Texts read one at a time, each a fresh string, as ingest reads them from disk.
		_, fromFunc, err := FitEmbedFunc(context.Background(), len(many), func(i int) (string, error) {
			return strings.Clone(many[i]), nil
		}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, fromFunc); diff != "" {
			t.Errorf("FitEmbedFunc differs from FitEmbed (-FitEmbed +FitEmbedFunc):\n%s", diff)
		}
	}
}

func TestFitEmbedFuncReadError(t *testing.T) {
	broken := errors.New("disk gone")
	for _, at := range []int{0, 7} { // while grouping, and while counting (the second read)
		reads := map[int]int{}
		var mu sync.Mutex
		_, _, err := FitEmbedFunc(context.Background(), 10, func(i int) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			reads[i]++
			if i == at && reads[i] == 1+at%2 {
				return "", broken
			}
			return fitTexts[i%len(fitTexts)], nil
		}, LocalConfig{})
		if !errors.Is(err, broken) {
			t.Errorf("read error at text %d: %v, want it returned", at, err)
		}
	}
}

// TestFitEmbedIntoPuts checks that every position gets its vector exactly once, copies included, and that the
// first error put returns ends the embedding.
func TestFitEmbedIntoPuts(t *testing.T) {
	texts := append(append([]string{}, fitTexts...), fitTexts...) // every text twice
	_, want, err := FitEmbed(context.Background(), texts, LocalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := make([][]float32, len(texts))
	puts := make([]int, len(texts))
	_, err = FitEmbedInto(context.Background(), len(texts), func(i int) (string, error) { return texts[i], nil },
		LocalConfig{}, func(i int, v []float32) error {
			mu.Lock()
			defer mu.Unlock()
			got[i] = append([]float32(nil), v...)
			puts[i]++
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("put vectors differ from FitEmbed's (-want +got):\n%s", diff)
	}
	for i, n := range puts {
		if n != 1 {
			t.Errorf("text %d put %d times", i, n)
		}
	}
	full := errors.New("disk full")
	_, err = FitEmbedInto(context.Background(), len(texts), func(i int) (string, error) { return texts[i], nil },
		LocalConfig{}, func(i int, v []float32) error { return full })
	if !errors.Is(err, full) {
		t.Errorf("put error: %v, want it returned", err)
	}
}

// multilingualTexts are a site's texts in French, German and Japanese.
var multilingualTexts = []string{
	"Le fichier de configuration du serveur se trouve dans le répertoire /etc.",
	"Les utilisateurs peuvent modifier leur mot de passe avec la commande passwd.",
	"Die Konfigurationsdatei des Servers liegt im Verzeichnis /etc.",
	"Benutzer ändern ihr Passwort mit dem Befehl passwd.",
	"サーバーの設定ファイルは /etc ディレクトリーにあります。",
	"ユーザーは passwd コマンドでパスワードを変更します。",
	"フォントの一覧は fc-list コマンドで表示します。",
}

func TestLocalLanguages(t *testing.T) {
	english := append(append([]string{}, fitTexts...), background...)
	// A site in English reads as it always has: the same name, state and vectors with or without its language.
	plain := FitLocal(english, LocalConfig{})
	for _, langs := range [][]string{{"en"}, {"en-US", "EN"}, {""}} {
		l := FitLocal(english, LocalConfig{Languages: langs})
		if l.Name() != plain.Name() {
			t.Errorf("Languages %q: Name %q, want %q", langs, l.Name(), plain.Name())
		}
		a, _ := plain.MarshalBinary()
		b, _ := l.MarshalBinary()
		if !bytes.Equal(a, b) {
			t.Errorf("Languages %q: the state differs from an English embedder's", langs)
		}
		if diff := cmp.Diff(embedOne(t, plain, english...), embedOne(t, l, english...)); diff != "" {
			t.Errorf("Languages %q: vectors differ (-none +en):\n%s", langs, diff)
		}
	}
	site := append(append([]string{}, multilingualTexts...), english...)
	l := FitLocal(site, LocalConfig{Languages: []string{"fr", "de", "en", "ja"}})
	if l.Name() == FitLocal(site, LocalConfig{}).Name() {
		t.Errorf("Name %q does not tell the languages", l.Name())
	}
	cos := func(a, b string) float64 {
		v := embedOne(t, l, a, b)
		return dot(v[0], v[1])
	}
	// French stopwords count for nothing in a French text.
	if c := cos("le fichier de configuration du serveur", "fichier configuration serveur"); c < 0.999 {
		t.Errorf("French stopwords still count: cosine %.3f", c)
	}
	// A Japanese question meets the Japanese text that writes its words, by their character bigrams.
	q := "フォントを一覧表示するには？"
	if near, far := cos(q, multilingualTexts[6]), cos(q, multilingualTexts[5]); near <= far || near < 0.2 {
		t.Errorf("Japanese question: cosine %.3f with the text on fonts, %.3f with another", near, far)
	}
}
