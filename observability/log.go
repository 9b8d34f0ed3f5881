package observability

import (
	"context"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"time"

	"golang.org/x/term"
)

// LogFormat selects how log lines are written.
type LogFormat string

// Log formats. LogAuto picks text on a terminal and JSON otherwise.
const (
	LogAuto LogFormat = ""
	LogJSON LogFormat = "json"
	LogText LogFormat = "text"
)

// LogConfig configures NewLogger. The zero value works.
type LogConfig struct {
	// Level is the lowest level written. Default: slog.LevelInfo.
	Level slog.Level
	// Format is LogAuto, LogJSON or LogText. Default: LogAuto.
	Format LogFormat
}

// NewLogger returns a logger writing to w: JSON when w is not a terminal (a
// container or a file, where lines are collected and parsed), text when it is.
// Attributes whose key names a secret (authorization, api_key, password, ...)
// are replaced by "[REDACTED]", and bearer tokens and sk- keys inside any
// string value are masked, so a secret passed by mistake is not written.
func NewLogger(w io.Writer, cfg LogConfig) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.Level, ReplaceAttr: redactAttr}
	format := cfg.Format
	if format == LogAuto {
		format = LogJSON
		if isTerminal(w) {
			format = LogText
		}
	}
	if format == LogText {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// redacted replaces secret values in logs.
const redacted = "[REDACTED]"

// secretKeys are attribute keys (lower-cased, '-' read as '_') whose value is
// a secret; a key ending in one of them ("openai_api_key") is secret too.
func secretKeys() []string {
	return []string{"authorization", "api_key", "apikey", "password", "secret", "cookie", "set_cookie", "bearer", "credentials"}
}

// secretPattern finds credentials inside free text (an upstream error that
// echoes a header, say): bearer tokens and OpenAI-style sk- keys.
var secretPattern = regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+|\bsk-[A-Za-z0-9_-]{6,}`)

func isSecretKey(key string) bool {
	k := strings.ReplaceAll(strings.ToLower(key), "-", "_")
	for _, s := range secretKeys() {
		if k == s || strings.HasSuffix(k, "_"+s) {
			return true
		}
	}
	return false
}

func maskSecrets(s string) string {
	return secretPattern.ReplaceAllStringFunc(s, func(m string) string {
		if len(m) > 7 && strings.EqualFold(m[:7], "bearer ") {
			return m[:7] + redacted
		}
		if strings.HasPrefix(strings.ToLower(m), "bearer") {
			return "Bearer " + redacted
		}
		return "sk-" + redacted
	})
}

func redactAttr(_ []string, a slog.Attr) slog.Attr {
	if isSecretKey(a.Key) {
		return slog.String(a.Key, redacted)
	}
	switch a.Value.Kind() {
	case slog.KindString:
		if s := a.Value.String(); secretPattern.MatchString(s) {
			return slog.String(a.Key, maskSecrets(s))
		}
	case slog.KindAny:
		if err, ok := a.Value.Any().(error); ok {
			return slog.String(a.Key, maskSecrets(err.Error()))
		}
	}
	return a
}

// StageTiming is the time one retrieval stage took.
type StageTiming struct {
	Stage    string
	Duration time.Duration
}

// RequestLog is everything the one log line per request carries. Leave a
// field zero when it does not apply; zero fields are left out of the line.
type RequestLog struct {
	RequestID string
	Method    string
	Route     string
	// Model is the model the client asked for.
	Model  string
	Stream bool
	// Task is Open WebUI's task name, "" for a user turn.
	Task   string
	Status int
	// Duration is the whole request, to the last byte written.
	Duration         time.Duration
	TimeToFirstToken time.Duration
	InputTokens      int
	OutputTokens     int
	// Retrieval lists the retrieval stages in the order they ran.
	Retrieval []StageTiming
	// Cache is the response cache result: "hit", "miss" or "".
	Cache string
	// Upstream names the upstream that answered ("" when none did); Failover
	// is true when the request was sent to the fallback upstream, whether or
	// not the fallback answered.
	Upstream           string
	Failover           bool
	ClientDisconnected bool
	// Err is the error the request ended with, if any.
	Err error
}

// maxLoggedValue bounds client-supplied strings (the model name) in a log line.
const maxLoggedValue = 128

// LogRequest writes the one line for a finished request: level ERROR for a
// 5xx status, WARN for a 4xx, INFO otherwise; message "request". Durations are
// in milliseconds. Nothing from the request's headers or body is logged
// besides the model name, truncated, so no credential reaches the log.
func LogRequest(ctx context.Context, l *slog.Logger, r RequestLog) {
	level := slog.LevelInfo
	switch {
	case r.Status >= 500:
		level = slog.LevelError
	case r.Status >= 400:
		level = slog.LevelWarn
	}
	if !l.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 20)
	add := func(a slog.Attr) { attrs = append(attrs, a) }
	add(slog.String("request_id", r.RequestID))
	if r.Method != "" {
		add(slog.String("method", r.Method))
	}
	if r.Route != "" {
		add(slog.String("route", r.Route))
	}
	if r.Model != "" {
		add(slog.String("model", truncate(r.Model, maxLoggedValue)))
	}
	add(slog.Bool("stream", r.Stream))
	if r.Task != "" {
		add(slog.String("task", truncate(r.Task, maxLoggedValue)))
	}
	add(slog.Int("status", r.Status))
	add(slog.Float64("duration_ms", ms(r.Duration)))
	if r.TimeToFirstToken > 0 {
		add(slog.Float64("ttft_ms", ms(r.TimeToFirstToken)))
	}
	if r.InputTokens > 0 || r.OutputTokens > 0 {
		add(slog.Int("input_tokens", r.InputTokens))
		add(slog.Int("output_tokens", r.OutputTokens))
	}
	if len(r.Retrieval) > 0 {
		stages := make([]any, 0, len(r.Retrieval))
		for _, s := range r.Retrieval {
			stages = append(stages, slog.Float64(s.Stage+"_ms", ms(s.Duration)))
		}
		add(slog.Group("retrieval", stages...))
	}
	if r.Cache != "" {
		add(slog.String("cache", r.Cache))
	}
	if r.Upstream != "" {
		add(slog.String("upstream", r.Upstream))
	}
	if r.Failover {
		add(slog.Bool("failover", true))
	}
	if r.ClientDisconnected {
		add(slog.Bool("client_disconnected", true))
	}
	if r.Err != nil {
		add(slog.String("error", r.Err.Error()))
	}
	l.LogAttrs(ctx, level, "request", attrs...)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary so the line stays valid UTF-8.
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
