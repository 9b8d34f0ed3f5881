package grounding

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/retrieval"
)

// CacheSettings is what shapes g's answers besides the request and the index version, for the response cache
// key (server.Config.RetrievalSettings): the retrieval configuration, the offline mode, the sources shown, the
// backends searched (named as backends.Config.Names does), the link hosts, the FAQ (FAQDigest) and what the
// site's FAQ markup may do. Changing any of them replays none of the earlier answers.
func (g *Grounder) CacheSettings(rcfg retrieval.Config, backends, faqDigest, siteFAQ string) (string, error) {
	b, err := json.Marshal(struct {
		Retrieval retrieval.Config
		Offline   bool
		Sources   int
		Backends  string
		LinkHosts []string
		FAQ       string
		SiteFAQ   string
	}{rcfg, g.Offline, g.MaxSources, backends, g.LinkHosts, faqDigest, siteFAQ})
	return string(b), err
}

// PromptVersion identifies the grounding prompt for site under the binary's version, for the response cache key
// (server.Config.PromptVersion): it changes with the prompt or the binary.
func PromptVersion(site, version string) string {
	return cache.Key(GroundingPrompt, site, version)[:16]
}

// FAQDigest identifies the content of the FAQ file and the thresholds it is used with, for the response cache
// key: editing the file changes it. An unset or unreadable file counts as empty.
func FAQDigest(file string, direct, evidence float64) string {
	b, _ := os.ReadFile(file) // nothing when unset
	return cache.Key(string(b), fmt.Sprint(direct, evidence))[:16]
}
