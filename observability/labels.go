package observability

import (
	"strconv"
	"time"
)

// Other is the label value every unknown or unexpected value collapses to.
const Other = "other"

// errOther is the error.type fallback the OpenTelemetry conventions define
// ("_OTHER", attribute registry: error.type).
const errOther = "_OTHER"

// The fixed label-value sets below are the only values each label can take
// besides Other; keeping them closed keeps the series count bounded whatever a
// client sends. They are functions so no package-level slice can be mutated.

// defaultRoutes lists the routes ragproxy serves.
func defaultRoutes() []string {
	return []string{
		"/v1/chat/completions", "/v1/models", "/v1/retrieve",
		"/metrics", "/healthz", "/readyz", "/", "/assets/*",
	}
}

// defaultCaches lists the caches the server and retrieval keep.
func defaultCaches() []string {
	return []string{"response", "retrieval", "analysis", "embedding"}
}

// knownCacheResults lists the cache lookup results.
func knownCacheResults() []string {
	return []string{"hit", "miss", "error"}
}

// knownOutcomes lists the upstream call outcomes.
func knownOutcomes() []string {
	return []string{"success", "error", "timeout", "rate_limited", "canceled"}
}

// knownErrTypes lists the error.type values besides HTTP status codes.
func knownErrTypes() []string {
	return []string{"timeout", "canceled", "connection", "invalid_response", errOther}
}

// knownProviders lists the well-known gen_ai.provider.name values (OpenTelemetry GenAI attribute registry).
func knownProviders() []string {
	return []string{
		"openai", "azure.ai.openai", "azure.ai.inference", "anthropic", "aws.bedrock", "cohere",
		"deepseek", "gcp.gemini", "gcp.gen_ai", "gcp.vertex_ai", "groq", "ibm.watsonx.ai",
		"mistral_ai", "perplexity", "x_ai",
	}
}

// knownBackends lists the backends a server probes for readiness.
func knownBackends() []string {
	return []string{"qdrant", "neo4j", "redis"}
}

// labelSet is a closed set of label values.
type labelSet map[string]struct{}

func newLabelSet(groups ...[]string) labelSet {
	s := labelSet{}
	for _, g := range groups {
		for _, v := range g {
			if v != "" {
				s[v] = struct{}{}
			}
		}
	}
	return s
}

// bound returns v when it is in the set and Other otherwise.
func (s labelSet) bound(v string) string {
	if _, ok := s[v]; ok {
		return v
	}
	return Other
}

// codeLabel renders an HTTP status code; anything outside 100-599 is Other.
func codeLabel(code int) string {
	if code < 100 || code > 599 {
		return Other
	}
	return strconv.Itoa(code)
}

// chatTask is the task label of an ordinary request, one that is no client's background task.
const chatTask = "chat"

// taskLabel maps an empty task (an ordinary request) to "chat", and a task not in Config.Tasks to Other.
func (m *Metrics) taskLabel(task string) string {
	if task == "" {
		return chatTask
	}
	return m.tasks.bound(task)
}

// errTypeLabel bounds an error.type value: "" (success) stays empty so the
// label is absent, as the conventions ask; a 3-digit HTTP status is kept; a
// known name is kept; anything else is "_OTHER".
func (m *Metrics) errTypeLabel(errType string) string {
	if errType == "" {
		return ""
	}
	if n, err := strconv.Atoi(errType); err == nil && len(errType) == 3 && n >= 100 && n <= 599 {
		return errType
	}
	if _, ok := m.errTypes[errType]; ok {
		return errType
	}
	return errOther
}

func boolLabel(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// seconds converts a duration for a histogram; negative durations (a clock
// step) are recorded as 0 rather than corrupting the sum.
func seconds(d time.Duration) float64 {
	if d < 0 {
		return 0
	}
	return d.Seconds()
}
