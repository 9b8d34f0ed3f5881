package main

import (
	"context"

	"github.com/ragproxy/ragproxy/serve"
)

// runServe parses serve's flags and runs the gateway they describe (see package serve) until ctx ends.
func runServe(ctx context.Context, args []string) error {
	f, err := parseServeFlags(args)
	if err != nil {
		return err
	}
	return serve.Run(ctx, f.cfg)
}
