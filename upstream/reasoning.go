package upstream

import (
	"encoding/json"
	"fmt"
	"strings"
)

// IsReasoningModel reports whether OpenAI treats model as a reasoning model: the o-series (o1, o3, o3-mini,
// o4-mini, ...) and gpt-5 and its variants.
func IsReasoningModel(model string) bool {
	if strings.HasPrefix(model, "gpt-5") {
		return true
	}
	return len(model) >= 2 && model[0] == 'o' && '1' <= model[1] && model[1] <= '9'
}

// forModel rewrites a chat request body for the model it goes to. A reasoning model takes no temperature or
// top_p but their default 1 and no max_tokens (OpenAI's reasoning guide: "use max_completion_tokens", which also
// bounds the reasoning tokens); the request is written that way here, where the body for each upstream is
// encoded, because failover may send one call to a model of either kind. Other models' bodies are returned
// as they are.
func forModel(model string, body []byte) ([]byte, error) {
	if !IsReasoningModel(model) {
		return body, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, fmt.Errorf("upstream body for %s: %w", model, err)
	}
	changed := false
	for _, k := range []string{"temperature", "top_p"} {
		if v, ok := fields[k]; ok && string(v) != "1" {
			delete(fields, k)
			changed = true
		}
	}
	if v, ok := fields["max_tokens"]; ok {
		delete(fields, "max_tokens")
		if _, set := fields["max_completion_tokens"]; !set && string(v) != "null" {
			fields["max_completion_tokens"] = v
		}
		changed = true
	}
	if !changed {
		return body, nil
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("upstream body for %s: %w", model, err)
	}
	return b, nil
}
