package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"

	"github.com/ragproxy/ragproxy/server"
)

// embedFlags are serve's flags for the chat widget on the site's own pages.
type embedFlags struct {
	origins, keys string
	rpm           int
}

func (e *embedFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&e.origins, "embed-origins", envOr("RAGPROXY_EMBED_ORIGINS", ""), "comma-separated origins of the sites whose pages may carry the chat widget (/widget.js), e.g. https://www.example.edu; empty turns the widget off (RAGPROXY_EMBED_ORIGINS)")
	fs.StringVar(&e.keys, "widget-keys", envOr("RAGPROXY_WIDGET_KEYS", ""), "comma-separated publishable keys for the widget (public: chat only, from the embed origins, rate-limited per visitor); needed with --api-keys (RAGPROXY_WIDGET_KEYS)")
	fs.IntVar(&e.rpm, "widget-rpm", envInt("RAGPROXY_WIDGET_RPM", server.DefaultWidgetRequestsPerMinute), "chat requests per minute of one visitor (client address) with a widget key (RAGPROXY_WIDGET_RPM)")
}

// check validates the origins, and that a widget key is neither a client nor an admin key, and that a server
// asking for client keys has a widget key to give the widget.
func (e *embedFlags) check(clientKeys, adminKeys []string) error {
	for _, o := range splitList(e.origins) {
		if err := server.CheckEmbedOrigin(o); err != nil {
			return fmt.Errorf("serve: --embed-origins: %w", err)
		}
	}
	keys := splitList(e.keys)
	for _, k := range keys {
		if slices.Contains(clientKeys, k) || slices.Contains(adminKeys, k) {
			return errors.New("serve: --widget-keys: a widget key is public; it must not also be a client or an admin key")
		}
	}
	if e.origins != "" && len(clientKeys) > 0 && len(keys) == 0 {
		return errors.New("serve: --embed-origins with --api-keys needs --widget-keys: the widget cannot hold a client key")
	}
	return nil
}

func (e *embedFlags) config() server.Embed {
	return server.Embed{Origins: server.EmbedOrigins(splitList(e.origins)), Keys: splitList(e.keys), RequestsPerMinute: e.rpm}
}
