package grounding

import (
	"bytes"
	"context"
	"errors"
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
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/qdrant"
	"github.com/ragproxy/ragproxy/server"
)

// AssistantDef is one section assistant as serve's flags and its assistants file define it.
type AssistantDef struct {
	// Name is its model id in /v1/models.
	Name string `yaml:"name"`
	// Prefixes are the URL prefixes (absolute URLs or paths) of its pages.
	Prefixes []string `yaml:"prefixes"`
	// SiteName names it in the grounding prompt and its answers; default "<site name> — <name>".
	SiteName string `yaml:"site_name,omitempty"`
	// From says where it was defined ("--assistant nursing"), for error messages.
	From string `yaml:"-"`
}

// Definition is a checked definition with its parsed scope.
type Definition struct {
	AssistantDef
	Scope *retrieval.Scope
}

// Definitions are the section assistants of a server (or an eval), as ResolveAssistants checked them.
type Definitions []Definition

// modelIDRE is what an assistant's name may look like: a model id clients can send and a metric label can carry.
var modelIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$`)

// ErrAssistant is wrapped by every error in the assistants' definitions.
var ErrAssistant = errors.New("bad section assistant")

// ResolveAssistants checks every definition: names (valid model ids, unique, none of reserved, which are the
// other models served) and prefixes. It does not look at the index (Definitions.Check does).
func ResolveAssistants(defs []AssistantDef, reserved ...string) (Definitions, error) {
	out := make(Definitions, len(defs))
	seen := map[string]string{}
	for i, def := range defs {
		d := &out[i]
		d.AssistantDef = def
		switch {
		case !modelIDRE.MatchString(d.Name):
			return nil, fmt.Errorf("%s: name %q is not a valid model id (letters, digits, '.', '_', ':' or '-', at most 64, starting with a letter or digit): %w",
				d.From, d.Name, ErrAssistant)
		case seen[d.Name] != "":
			return nil, fmt.Errorf("%s: name %q is also defined by %s: %w", d.From, d.Name, seen[d.Name], ErrAssistant)
		case slices.Contains(reserved, d.Name):
			return nil, fmt.Errorf("%s: name %q is already a model served (the site's assistant or the upstream model); choose another: %w",
				d.From, d.Name, ErrAssistant)
		case len(d.Prefixes) == 0:
			return nil, fmt.Errorf("%s: no URL prefixes: %w", d.From, ErrAssistant)
		}
		seen[d.Name] = d.From
		s, err := retrieval.NewScope(d.Prefixes...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.From, err)
		}
		d.Scope = s
	}
	return out, nil
}

// ReadAssistants reads an assistants file (serve's --assistants): a YAML (or JSON, which YAML reads too) list of
// name, prefixes and optional site_name. Unknown fields are errors, so a misspelt one is not silently ignored.
func ReadAssistants(path string) ([]AssistantDef, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--assistants: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var defs []AssistantDef
	if err := dec.Decode(&defs); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("--assistants %s: want a list of {name, prefixes, site_name}: %w", path, err)
	}
	for i := range defs {
		defs[i].From = fmt.Sprintf("--assistants %s: entry %d", path, i+1)
		if defs[i].Name != "" {
			defs[i].From += " (" + defs[i].Name + ")"
		}
	}
	return defs, nil
}

// Names returns the assistants' model ids.
func (ds Definitions) Names() []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Name
	}
	return out
}

// Find returns the assistant called name.
func (ds Definitions) Find(name string) (Definition, bool) {
	for _, d := range ds {
		if d.Name == name {
			return d, true
		}
	}
	return Definition{}, false
}

// Check fails when a prefix of an assistant matches no page of ix: at start, that is a configuration error;
// on a reload, the server keeps the version it serves.
func (ds Definitions) Check(ix *index.Index) error {
	for _, d := range ds {
		if err := d.Scope.Check(ix); err != nil {
			return fmt.Errorf("%s: %w", d.From, err)
		}
	}
	return nil
}

// CheckQdrant warns when assistants are configured and the Qdrant collections bk's searcher reads (of ix's
// version) hold pages without url_prefixes, written by an earlier release: the assistants' searches do not find
// them until an ingest with this release sets it in place. It does not refuse the version: a newer version
// synced by the same earlier release lacks it too, and its pages serve the whole site's model as before. It
// reports the number of such pages; 0 without assistants or Qdrant, or when Qdrant cannot be asked (the
// backends' Verify reports that).
func (ds Definitions) CheckQdrant(bk retrieval.Backends, ix *index.Index, logger *slog.Logger) int {
	s, ok := bk.Vectors.(*qdrant.Searcher)
	if !ok || len(ds) == 0 {
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
		"index_version", ix.Manifest.Version, "summaries", sum, "unlabelled_pages", d.Unlabelled, "assistants", ds.Names())
	return d.Unlabelled
}

// Wire makes g answer for each assistant and scfg list it in /v1/models after the site's assistant (model id
// main), asking upstream for the same model; the definitions join the response cache key, so changing an
// assistant's prefixes or name replays none of its earlier answers.
func (ds Definitions) Wire(g *Grounder, scfg *server.Config, main, upstreamModel string) {
	g.Model = main
	for _, d := range ds {
		g.Assistants = append(g.Assistants, Assistant{Name: d.Name, SiteName: d.SiteName, Scope: d.Scope})
		scfg.Models = append(scfg.Models, server.ModelAlias{ID: d.Name, Upstream: upstreamModel})
	}
	if len(ds) > 0 {
		var parts []any
		for _, d := range ds {
			parts = append(parts, d.Name, d.SiteName, d.Scope.Keys())
		}
		scfg.RetrievalSettings += "\x00assistants " + cache.Key(parts...)[:16]
	}
}

// LoadAssistants reads the section assistants of a file (ReadAssistants; none when file is "") and of specs
// written NAME=PREFIX[,PREFIX...] (a command line's --assistant, named so in errors), and resolves them all
// (ResolveAssistants): reserved are the other models served.
func LoadAssistants(file string, specs []string, reserved ...string) (Definitions, error) {
	var defs []AssistantDef
	if file != "" {
		fromFile, err := ReadAssistants(file)
		if err != nil {
			return nil, err
		}
		defs = append(defs, fromFile...)
	}
	for _, v := range specs {
		name, list, ok := strings.Cut(v, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("--assistant %q: want NAME=PREFIX[,PREFIX...]: %w", v, ErrAssistant)
		}
		var prefixes []string
		for _, p := range strings.Split(list, ",") {
			if p = strings.TrimSpace(p); p != "" {
				prefixes = append(prefixes, p)
			}
		}
		defs = append(defs, AssistantDef{Name: name, Prefixes: prefixes, From: "--assistant " + name})
	}
	return ResolveAssistants(defs, reserved...)
}

// FindAssistant returns the assistant spec names among those of file: a spec NAME=PREFIX[,PREFIX...] defines
// it, a bare NAME is looked up in the file (an evaluation's --assistant).
func FindAssistant(file, spec string) (Definition, error) {
	name, specs := spec, []string(nil)
	if n, _, ok := strings.Cut(spec, "="); ok {
		name, specs = strings.TrimSpace(n), []string{spec}
	}
	list, err := LoadAssistants(file, specs)
	if err != nil {
		return Definition{}, err
	}
	d, ok := list.Find(name)
	if !ok {
		where := "no --assistants file is given"
		if file != "" {
			where = file + " defines " + strings.Join(list.Names(), ", ")
		}
		return Definition{}, fmt.Errorf("--assistant %q: no such assistant (%s): %w", name, where, ErrAssistant)
	}
	return d, nil
}
