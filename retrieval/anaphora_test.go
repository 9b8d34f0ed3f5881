package retrieval

import (
	"context"
	"strings"
	"testing"
)

func TestRefersBack(t *testing.T) {
	for _, c := range []struct {
		lang, text string
		want       bool
	}{
		{"en", "This RAID level is slightly more expensive than the previous two.", true},
		{"en", "This is accomplished by using the command `passwd -l user` (lock).", true},
		{"en", "In that case, the login for the root user will be deactivated.", true},
		{"en", "Both these kinds of packages can be created by `equivs-build`.", true},
		{"en", "**This** procedure is limited to a maximum of two courses.", true},
		{"en", "It is False at runtime.", false}, // a personal pronoun: its antecedent may be a whole section
		{"en", "Thistle is a plant.", false},
		{"en", "In 2014, Devuan forked Debian.", false},
		{"", "These options are ignored.", true}, // a language without a list reads as English
		{"de", "Diese Einstellung gilt für alle Benutzer.", true},
		{"de", "In diesem Fall wird die Datei ignoriert.", true},
		{"de", "Dafür gibt es den Befehl `fc-list`.", true},
		{"de", "Die Datei liegt in `/etc`.", false},
		{"fr", "Cette option est désactivée par défaut.", true},
		{"fr", "Dans ce cas, le fichier est ignoré.", true},
		{"fr", "Le fichier est ignoré.", false},
		{"es", "En este caso, el archivo se ignora.", true},
		{"it", "Ciò vale per tutti gli utenti.", true},
		{"pt", "Neste caso, o arquivo é ignorado.", true},
		{"ru", "В этом случае файл игнорируется.", true},
		{"ru", "Файл игнорируется.", false},
		{"ja", "この設定はすべてのユーザーに適用されます。", true},
		{"ja", "設定はすべてのユーザーに適用されます。", false},
		{"zh-cn", "该命令列出所有字体。", true},
	} {
		if got := refersBack(c.lang, c.text); got != c.want {
			t.Errorf("refersBack(%q, %q) = %v, want %v", c.lang, c.text, got, c.want)
		}
	}
}

// A sentence that refers back is read with the one before it: "This RAID level …" holds the question's "RAID"
// and "6" through "RAID-6 can be considered …", and its own "two drives can fail" then answers "how many disks can
// fail in raid 6" before the sentences that name RAID levels and disks and say nothing of failing.
func TestEvidenceSentenceThatRefersBack(t *testing.T) {
	site := newTestSite(t)
	site.addPage("RAID", []string{"## RAID levels\n\nRAID-1 mirrors data over several disks and stores each block twice. " +
		"RAID-6 can be considered an extension of RAID-5, where each series of blocks involves two redundancy blocks. " +
		"This RAID level is slightly more expensive, but up to two drives can fail without compromising data availability.\n\n" +
		"RAID-6 disks are listed in the table of disks."})
	r := site.retriever(t, Config{NoWordNet: true})
	res, err := r.Retrieve(context.Background(), "raid 6 how many disks can fail", nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := r.Evidence(res, 3)
	if len(ev) == 0 || !strings.HasPrefix(ev[0].Text, "This RAID level") {
		t.Fatalf("best unit %+v, want the sentence that refers back to RAID-6", ev)
	}
	if want := "RAID-6 can be considered an extension of RAID-5, where each series of blocks involves two redundancy blocks."; ev[0].Before != want {
		t.Errorf("Before = %q, want %q", ev[0].Before, want)
	}
	off := r.WithConfig(Config{NoWordNet: true, EvidenceOff: EvidenceSignals{Anaphora: true}})
	if ev := off.Evidence(res, 3); len(ev) > 0 && ev[0].Before != "" {
		t.Errorf("with anaphora off, the best unit still reads the sentence before it: %+v", ev[0])
	}
}
