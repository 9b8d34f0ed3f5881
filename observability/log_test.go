package observability

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNewLoggerFormat(t *testing.T) {
	tests := []struct {
		name     string
		format   LogFormat
		wantJSON bool
	}{
		{"auto on a buffer (not a terminal) is JSON", LogAuto, true},
		{"json", LogJSON, true},
		{"text", LogText, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			NewLogger(&buf, LogConfig{Format: tt.format}).Info("hello", "k", "v")
			var obj map[string]any
			isJSON := json.Unmarshal(buf.Bytes(), &obj) == nil
			if isJSON != tt.wantJSON {
				t.Errorf("output %q: JSON = %v, want %v", buf.String(), isJSON, tt.wantJSON)
			}
			if !strings.Contains(buf.String(), "hello") {
				t.Errorf("output %q lacks the message", buf.String())
			}
		})
	}
}

func TestLogRequest(t *testing.T) {
	tests := []struct {
		name      string
		in        RequestLog
		wantLevel string
		want      map[string]any
	}{
		{
			name: "streamed answer with retrieval",
			in: RequestLog{
				RequestID: "req-1", Method: "POST", Route: "/v1/chat/completions", Model: "berkeley-guide",
				Stream: true, Status: 200, Duration: 2500 * time.Millisecond, TimeToFirstToken: 640 * time.Millisecond,
				InputTokens: 3100, OutputTokens: 212, Cache: "miss", Upstream: "primary",
				Retrieval: []StageTiming{{"analysis", 300 * time.Millisecond}, {"pages", 12500 * time.Microsecond}},
			},
			wantLevel: "INFO",
			want: map[string]any{
				"request_id": "req-1", "method": "POST", "route": "/v1/chat/completions", "model": "berkeley-guide",
				"stream": true, "status": 200.0, "duration_ms": 2500.0, "ttft_ms": 640.0,
				"input_tokens": 3100.0, "output_tokens": 212.0, "cache": "miss", "upstream": "primary",
				"retrieval": map[string]any{"analysis_ms": 300.0, "pages_ms": 12.5},
			},
		},
		{
			name: "upstream failure after failover",
			in: RequestLog{
				RequestID: "req-2", Route: "/v1/chat/completions", Model: "gpt-4o-mini", Status: 502,
				Duration: time.Second, Upstream: "secondary", Failover: true,
				Err: errors.New("upstream: POST https://api.example/v1/chat/completions: 401 Authorization: Bearer sk-live1234567890abcdef"),
			},
			wantLevel: "ERROR",
			want: map[string]any{
				"request_id": "req-2", "route": "/v1/chat/completions", "model": "gpt-4o-mini", "stream": false,
				"status": 502.0, "duration_ms": 1000.0, "upstream": "secondary", "failover": true,
				"error": "upstream: POST https://api.example/v1/chat/completions: 401 Authorization: Bearer [REDACTED]",
			},
		},
		{
			name:      "client error, abandoned, long model name truncated",
			in:        RequestLog{RequestID: "req-3", Model: strings.Repeat("m", 300), Status: 400, Task: "title_generation", ClientDisconnected: true},
			wantLevel: "WARN",
			want: map[string]any{
				"request_id": "req-3", "model": strings.Repeat("m", maxLoggedValue), "stream": false, "task": "title_generation",
				"status": 400.0, "duration_ms": 0.0, "client_disconnected": true,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			LogRequest(context.Background(), NewLogger(&buf, LogConfig{Format: LogJSON}), tt.in)
			var got map[string]any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("not one JSON line: %q: %v", buf.String(), err)
			}
			if got["level"] != tt.wantLevel || got["msg"] != "request" {
				t.Errorf("level=%v msg=%v, want %s request", got["level"], got["msg"], tt.wantLevel)
			}
			delete(got, "time")
			delete(got, "level")
			delete(got, "msg")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLogRequestRespectsLevel(t *testing.T) {
	var buf bytes.Buffer
	l := NewLogger(&buf, LogConfig{Format: LogJSON, Level: slog.LevelWarn})
	LogRequest(context.Background(), l, RequestLog{RequestID: "quiet", Status: 200})
	if buf.Len() != 0 {
		t.Errorf("a 200 was logged at level WARN: %q", buf.String())
	}
	LogRequest(context.Background(), l, RequestLog{RequestID: "loud", Status: 503})
	if !strings.Contains(buf.String(), "loud") {
		t.Errorf("a 503 was not logged at level WARN: %q", buf.String())
	}
}

func TestSecretsNeverLogged(t *testing.T) {
	secrets := []string{"sk-proj-AbCdEf0123456789", "hunter2-neo4j", "qdrant-key-998877", "tok_abcdefgh"}
	for _, format := range []LogFormat{LogJSON, LogText} {
		t.Run(string(format), func(t *testing.T) {
			var buf bytes.Buffer
			l := NewLogger(&buf, LogConfig{Format: format})
			l.Info("config",
				"OPENAI_API_KEY", secrets[0],
				"neo4j_password", secrets[1],
				slog.Group("qdrant", "api-key", secrets[2]),
				"Authorization", "Bearer "+secrets[3],
				"note", "the key is "+secrets[0],
			)
			l.Error("upstream failed", "err", errors.New("401: bad key "+secrets[0]))
			out := buf.String()
			for _, s := range secrets {
				if strings.Contains(out, s) {
					t.Errorf("secret %q in log output:\n%s", s, out)
				}
			}
			if !strings.Contains(out, redacted) {
				t.Errorf("no redaction marker in output:\n%s", out)
			}
		})
	}
}

func FuzzMaskSecrets(f *testing.F) {
	for _, s := range []string{
		"", "plain text", "Authorization: Bearer abc.def-ghi", "key sk-abcdef123456 end",
		"bearer    x", "sk-sk-sk-aaaaaaaaaaaa", "BEARER sk-123456789",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := maskSecrets(s)
		if secretPattern.MatchString(got) {
			t.Errorf("maskSecrets(%q) = %q still holds a credential", s, got)
		}
		if again := maskSecrets(got); again != got {
			t.Errorf("maskSecrets not idempotent: %q -> %q", got, again)
		}
	})
}
