package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/ragproxy/ragproxy/grounding"
)

// assistantFlags are the section assistants of serve (and eval): repeatable --assistant NAME=PREFIX[,PREFIX...]
// and --assistants FILE (RAGPROXY_ASSISTANTS).
type assistantFlags struct {
	inline repeated
	file   string
	list   grounding.Definitions // after resolve
}

func (a *assistantFlags) register(fs *flag.FlagSet) {
	fs.Var(&a.inline, "assistant", "section assistant NAME=PREFIX[,PREFIX...]: a model of its own in /v1/models whose retrieval only considers the pages under the URL prefixes (absolute URLs or paths); repeatable")
	fs.StringVar(&a.file, "assistants", envOr("RAGPROXY_ASSISTANTS", ""), "YAML or JSON file listing section assistants (name, prefixes, optional site_name) (RAGPROXY_ASSISTANTS)")
}

// resolve reads the file and the flags, and checks every definition: syntax, names (valid model ids, unique,
// none of reserved, which are the other models served) and prefixes. It does not look at the index.
func (a *assistantFlags) resolve(reserved ...string) error {
	var defs []grounding.AssistantDef
	if a.file != "" {
		fromFile, err := grounding.ReadAssistants(a.file)
		if err != nil {
			return err
		}
		defs = append(defs, fromFile...)
	}
	for _, v := range a.inline {
		name, list, ok := strings.Cut(v, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return fmt.Errorf("--assistant %q: want NAME=PREFIX[,PREFIX...]: %w", v, grounding.ErrAssistant)
		}
		defs = append(defs, grounding.AssistantDef{Name: name, Prefixes: splitList(list), From: "--assistant " + name})
	}
	list, err := grounding.ResolveAssistants(defs, reserved...)
	if err != nil {
		return err
	}
	a.list = list
	return nil
}

// evalAssistant returns the assistant eval --assistant names: NAME=PREFIX[,PREFIX...] defines it there, a bare
// NAME is looked up in the assistants file.
func (a *assistantFlags) evalAssistant(spec string) (grounding.Definition, error) {
	name := spec
	if strings.Contains(spec, "=") {
		a.inline = append(a.inline, spec)
		name, _, _ = strings.Cut(spec, "=")
		name = strings.TrimSpace(name)
	}
	if err := a.resolve(); err != nil {
		return grounding.Definition{}, err
	}
	d, ok := a.list.Find(name)
	if !ok {
		where := "no --assistants file is given"
		if a.file != "" {
			where = a.file + " defines " + strings.Join(a.list.Names(), ", ")
		}
		return grounding.Definition{}, fmt.Errorf("--assistant %q: no such assistant (%s): %w", name, where, grounding.ErrAssistant)
	}
	return d, nil
}

// resolveAssistants checks serve's assistant definitions; they need an index, and names of their own.
func (f *serveFlags) resolveAssistants() error {
	if err := f.assistants.resolve(f.cfg.AssistantName(), f.up.model, f.cfg.Upstream.Fallback.Model); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if len(f.assistants.list) > 0 && f.cfg.Index == "" {
		return fmt.Errorf("serve: section assistants need --index: %w", grounding.ErrAssistant)
	}
	return nil
}
