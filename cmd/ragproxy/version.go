package main

import (
	"io"
	"log/slog"

	"github.com/ragproxy/ragproxy/observability"
)

// version is the ragproxy version, set at build time with -ldflags "-X main.version=...".
var version = "dev"

// newLogger returns the structured logger of a subcommand: text on a terminal, JSON otherwise.
func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return observability.NewLogger(w, observability.LogConfig{Level: l})
}
