package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/qdrant"
	"github.com/ragproxy/ragproxy/server"
)

// assistantDef is one section assistant as the flags and the file define it.
type assistantDef struct {
	// Name is its model id in /v1/models.
	Name string `yaml:"name"`
	// Prefixes are the URL prefixes (absolute URLs or paths) of its pages.
	Prefixes []string `yaml:"prefixes"`
	// SiteName names it in the grounding prompt and its answers; default "<site name> — <name>".
	SiteName string `yaml:"site_name,omitempty"`
}

// assistant is a checked definition with its parsed scope.
type assistant struct {
	assistantDef
	scope *retrieval.Scope
	// from says where it was defined, for error messages.
	from string
}

// assistantFlags are the section assistants of serve (and eval): repeatable --assistant NAME=PREFIX[,PREFIX...]
// and --assistants FILE (RAGPROXY_ASSISTANTS).
type assistantFlags struct {
	inline []string
	file   string
	list   []assistant // after resolve
}

// assistantList collects repeated --assistant values.
type assistantList struct{ values *[]string }

func (l assistantList) String() string {
	if l.values == nil {
		return ""
	}
	return strings.Join(*l.values, " ")
}

func (l assistantList) Set(v string) error {
	*l.values = append(*l.values, v)
	return nil
}

func (a *assistantFlags) register(fs *flag.FlagSet) {
	fs.Var(assistantList{&a.inline}, "assistant", "section assistant NAME=PREFIX[,PREFIX...]: a model of its own in /v1/models whose retrieval only considers the pages under the URL prefixes (absolute URLs or paths); repeatable")
	fs.StringVar(&a.file, "assistants", envOr("RAGPROXY_ASSISTANTS", ""), "YAML or JSON file listing section assistants (name, prefixes, optional site_name) (RAGPROXY_ASSISTANTS)")
}

// modelIDRE is what an assistant's name may look like: a model id clients can send and a metric label can carry.
var modelIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$`)

// errAssistant is wrapped by every error in the assistants' definitions.
var errAssistant = errors.New("bad section assistant")

// resolve reads the file and the flags, and checks every definition: syntax, names (valid model ids, unique,
// none of reserved, which are the other models served) and prefixes. It does not look at the index (check does).
func (a *assistantFlags) resolve(reserved ...string) error {
	var defs []assistant
	if a.file != "" {
		fromFile, err := readAssistants(a.file)
		if err != nil {
			return err
		}
		defs = append(defs, fromFile...)
	}
	for _, v := range a.inline {
		name, list, ok := strings.Cut(v, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return fmt.Errorf("--assistant %q: want NAME=PREFIX[,PREFIX...]: %w", v, errAssistant)
		}
		defs = append(defs, assistant{assistantDef: assistantDef{Name: name, Prefixes: splitList(list)},
			from: "--assistant " + name})
	}
	seen := map[string]string{}
	for i := range defs {
		d := &defs[i]
		switch {
		case !modelIDRE.MatchString(d.Name):
			return fmt.Errorf("%s: name %q is not a valid model id (letters, digits, '.', '_', ':' or '-', at most 64, starting with a letter or digit): %w",
				d.from, d.Name, errAssistant)
		case seen[d.Name] != "":
			return fmt.Errorf("%s: name %q is also defined by %s: %w", d.from, d.Name, seen[d.Name], errAssistant)
		case slices.Contains(reserved, d.Name):
			return fmt.Errorf("%s: name %q is already a model served (the site's assistant or the upstream model); choose another: %w",
				d.from, d.Name, errAssistant)
		case len(d.Prefixes) == 0:
			return fmt.Errorf("%s: no URL prefixes: %w", d.from, errAssistant)
		}
		seen[d.Name] = d.from
		s, err := retrieval.NewScope(d.Prefixes...)
		if err != nil {
			return fmt.Errorf("%s: %w", d.from, err)
		}
		d.scope = s
	}
	a.list = defs
	return nil
}

// readAssistants reads an assistants file: a YAML (or JSON, which YAML reads too) list of name, prefixes and
// optional site_name. Unknown fields are errors, so a misspelt one is not silently ignored.
func readAssistants(path string) ([]assistant, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--assistants: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var defs []assistantDef
	if err := dec.Decode(&defs); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("--assistants %s: want a list of {name, prefixes, site_name}: %w", path, err)
	}
	out := make([]assistant, len(defs))
	for i, d := range defs {
		out[i] = assistant{assistantDef: d, from: fmt.Sprintf("--assistants %s: entry %d", path, i+1)}
		if d.Name != "" {
			out[i].from += " (" + d.Name + ")"
		}
	}
	return out, nil
}

// evalAssistant returns the assistant eval --assistant names: NAME=PREFIX[,PREFIX...] defines it there, a bare
// NAME is looked up in the assistants file.
func (a *assistantFlags) evalAssistant(spec string) (assistant, error) {
	name := spec
	if strings.Contains(spec, "=") {
		a.inline = append(a.inline, spec)
		name, _, _ = strings.Cut(spec, "=")
		name = strings.TrimSpace(name)
	}
	if err := a.resolve(); err != nil {
		return assistant{}, err
	}
	d, ok := a.find(name)
	if !ok {
		where := "no --assistants file is given"
		if a.file != "" {
			where = a.file + " defines " + strings.Join(a.names(), ", ")
		}
		return assistant{}, fmt.Errorf("--assistant %q: no such assistant (%s): %w", name, where, errAssistant)
	}
	return d, nil
}

// names returns the assistants' model ids.
func (a *assistantFlags) names() []string {
	out := make([]string, len(a.list))
	for i, d := range a.list {
		out[i] = d.Name
	}
	return out
}

// find returns the assistant called name.
func (a *assistantFlags) find(name string) (assistant, bool) {
	for _, d := range a.list {
		if d.Name == name {
			return d, true
		}
	}
	return assistant{}, false
}

// check fails when a prefix of an assistant matches no page of ix: at start, that is a configuration error;
// on a reload, the server keeps the version it serves.
func (a *assistantFlags) check(ix *index.Index) error {
	for _, d := range a.list {
		if err := d.scope.Check(ix); err != nil {
			return fmt.Errorf("%s: %w", d.from, err)
		}
	}
	return nil
}

// checkQdrant warns when assistants are configured and the Qdrant collections bk's searcher reads (of ix's
// version) hold pages without url_prefixes, written by an earlier release: the assistants' searches do not find
// them until an ingest with this release sets it in place. It does not refuse the version: a newer version
// synced by the same earlier release lacks it too, and its pages serve the whole site's model as before. It
// reports the number of such pages; 0 without assistants or Qdrant, or when Qdrant cannot be asked (verify
// reports that).
func (a *assistantFlags) checkQdrant(bk retrieval.Backends, ix *index.Index, logger *slog.Logger) int {
	s, ok := bk.Vectors.(*qdrant.Searcher)
	if !ok || len(a.list) == 0 {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := s.Verify(ctx, ix)
	if err != nil || d.Unlabelled == 0 {
		return 0
	}
	sum, _ := s.Collections()
	logger.Warn("qdrant's points of the index version lack url_prefixes (an earlier release synced them); section assistants find none of those pages until `ragproxy ingest ... --qdrant-url` runs with this release",
		"index_version", ix.Manifest.Version, "summaries", sum, "unlabelled_pages", d.Unlabelled, "assistants", a.names())
	return d.Unlabelled
}

// resolveAssistants checks serve's assistant definitions; they need an index, and names of their own.
func (f *serveFlags) resolveAssistants() error {
	if err := f.assistants.resolve(f.assistantName(), f.up.model, f.fallbackModel); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if len(f.assistants.list) > 0 && f.index == "" {
		return fmt.Errorf("serve: section assistants need --index: %w", errAssistant)
	}
	return nil
}

// wire makes g answer for each assistant and scfg list it in /v1/models after the site's assistant (model id
// main), asking upstream for the same model; the definitions join the response cache key, so changing an
// assistant's prefixes or name replays none of its earlier answers.
func (a *assistantFlags) wire(g *grounding.Grounder, scfg *server.Config, main, upstreamModel string) {
	g.Model = main
	for _, d := range a.list {
		g.Assistants = append(g.Assistants, grounding.Assistant{Name: d.Name, SiteName: d.SiteName, Scope: d.scope})
		scfg.Models = append(scfg.Models, server.ModelAlias{ID: d.Name, Upstream: upstreamModel})
	}
	if len(a.list) > 0 {
		var parts []any
		for _, d := range a.list {
			parts = append(parts, d.Name, d.SiteName, d.scope.Keys())
		}
		scfg.RetrievalSettings += "\x00assistants " + cache.Key(parts...)[:16]
	}
}
