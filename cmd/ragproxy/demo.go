package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/serve"
)

// runDemo indexes the bundled example site once and serves it: the quickest way to see ragproxy answer, with no
// key and no services. It takes serve's flags, with the example site's index, name and FAQ as their defaults.
func runDemo(ctx context.Context, args []string) error {
	var rebuild bool
	f, err := parseServeFlagsFor("demo", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&rebuild, "rebuild", false, "rebuild the demo index")
		for name, value := range map[string]string{"index": defaultDemoIndex(), "name": "lakeshore",
			"site-name": "Lakeshore Polytechnic", "faq": ""} {
			_ = fs.Set(name, value) // flags serve defines: cannot fail
		}
	})
	if err != nil {
		return err
	}
	c := &f.cfg
	rep, err := examples.EnsureIndex(ctx, c.Index, version, rebuild, newLogger(os.Stderr, "warn"))
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if rep != nil {
		fmt.Fprintf(os.Stderr, "demo: indexed %d pages, %d chunks into %s\n", rep.Pages, rep.Chunks, c.Index)
	}
	if c.Grounding.FAQFile == "" {
		// The example FAQ answers its questions directly; it sits beside the index.
		c.Grounding.FAQFile = filepath.Clean(c.Index) + ".faq.yaml"
		if err := os.WriteFile(c.Grounding.FAQFile, examples.FAQ, 0o644); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	fmt.Fprintf(os.Stderr, "demo: serving the %s example site at http://%s/v1 as model %q\n", c.SiteName, c.Server.Listen, c.AssistantName())
	fmt.Fprintf(os.Stderr, "demo: chat with it in a browser at http://%s/\n", c.Server.Listen)
	return serve.Run(ctx, f.cfg)
}

func defaultDemoIndex() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "ragproxy", "demo-index")
	}
	return filepath.Join(os.TempDir(), "ragproxy-demo-index")
}
