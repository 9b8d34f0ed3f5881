package main

import (
	"flag"
	"fmt"

	"github.com/ragproxy/ragproxy/grounding"
)

// assistantFlags are the section assistants of serve (and eval): repeatable --assistant NAME=PREFIX[,PREFIX...]
// and --assistants FILE (RAGPROXY_ASSISTANTS).
type assistantFlags struct {
	inline repeated
	file   string
	list   grounding.Definitions // after resolveAssistants
}

func (a *assistantFlags) register(fs *flag.FlagSet) {
	fs.Var(&a.inline, "assistant", "section assistant NAME=PREFIX[,PREFIX...]: a model of its own in /v1/models whose retrieval only considers the pages under the URL prefixes (absolute URLs or paths); repeatable")
	fs.StringVar(&a.file, "assistants", envOr("RAGPROXY_ASSISTANTS", ""), "YAML or JSON file listing section assistants (name, prefixes, optional site_name) (RAGPROXY_ASSISTANTS)")
}

// resolveAssistants checks serve's assistant definitions (grounding.LoadAssistants); they need an index, and
// names of their own.
func (f *serveFlags) resolveAssistants() error {
	list, err := grounding.LoadAssistants(f.assistants.file, f.assistants.inline, f.cfg.AssistantName(), f.up.model, f.cfg.Upstream.Fallback.Model)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if len(list) > 0 && f.cfg.Index == "" {
		return fmt.Errorf("serve: section assistants need --index: %w", grounding.ErrAssistant)
	}
	f.assistants.list = list
	return nil
}
