// Command ragproxy turns a website into a grounded assistant behind the
// OpenAI API. Each subcommand lives in its own file and registers itself in
// commands; flags and environment variables are read only in this package.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// command is one subcommand: it parses its own args and runs until ctx ends.
type command struct {
	summary string
	run     func(ctx context.Context, args []string) error
}

// commands maps subcommand names to their implementations. Other files add
// theirs here (serve.go: "serve"; later ingest, stats, eval, demo).
var commands = map[string]command{
	"serve":    {summary: "run the OpenAI-compatible proxy", run: runServe},
	"ingest":   {summary: "crawl or mirror a site into an index", run: runIngest},
	"stats":    {summary: "describe an index", run: runStats},
	"eval":     {summary: "measure retrieval and answer quality on a question set", run: runEval},
	"demo":     {summary: "index the bundled example site and serve it offline", run: runDemo},
	"health":   {summary: "ask a running server's /readyz (the image's healthcheck)", run: runHealth},
	"insights": {summary: "report what visitors asked, from the question log's database", run: runInsights},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "ragproxy:", err)
		}
		stop()
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage()
		if len(args) == 0 {
			return errors.New("no subcommand given")
		}
		return nil
	}
	cmd, ok := commands[args[0]]
	if !ok {
		usage()
		return fmt.Errorf("unknown subcommand %q", args[0])
	}
	return cmd.run(ctx, args[1:])
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: ragproxy <command> [flags]\n\ncommands:")
	for _, n := range slices.Sorted(maps.Keys(commands)) {
		fmt.Fprintf(os.Stderr, "  %-8s %s\n", n, commands[n].summary)
	}
}

// envOr returns the environment variable's value, or def when it is unset.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// envParsed returns the environment variable's value as parse reads it, or def when it is unset or unreadable.
func envParsed[T any](name string, def T, parse func(string) (T, error)) T {
	if v, ok := os.LookupEnv(name); ok {
		if x, err := parse(v); err == nil {
			return x
		}
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	return envParsed(name, def, time.ParseDuration)
}
func envInt(name string, def int) int    { return envParsed(name, def, strconv.Atoi) }
func envBool(name string, def bool) bool { return envParsed(name, def, strconv.ParseBool) }
