package grounding

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/internal/nodetest"
	"github.com/ragproxy/ragproxy/server"
)

// modelLike answers like a chat model would: a title prompt gets a title (as JSON when the request's
// response_format asks for a schema), and a grounded question an answer that cites the tuition page (as JSON
// {"answer", "sources"} for json_object or a schema with an "answer" property).
func modelLike(r *openaitest.Request) openaitest.Reply {
	last := ""
	if len(r.Messages) > 0 {
		last = r.Messages[len(r.Messages)-1].Text()
	}
	answer := "In-state tuition is $4,850 per semester ([Tuition and Fees](" + tuitionURL + "))."
	if gjson.GetBytes(r.Body, "response_format.json_schema.schema.properties.answer").Exists() ||
		gjson.GetBytes(r.Body, "response_format.type").String() == "json_object" {
		b, _ := json.Marshal(map[string]any{"answer": answer, "sources": []string{tuitionURL}})
		return openaitest.Reply{Content: string(b)}
	}
	if schema := gjson.GetBytes(r.Body, "response_format.json_schema.schema.properties"); schema.Exists() {
		out := `{"title":"In-State Tuition Cost"}`
		if schema.Get("language").Exists() {
			out = `{"language":"English","title":"In-State Tuition Cost"}`
		}
		return openaitest.Reply{Content: out}
	}
	if server.TaskKind(nil, []compat.Message{compat.TextMessage("user", last)}) != "" {
		return openaitest.Reply{Content: "In-State Tuition Cost"}
	}
	return openaitest.Reply{Content: answer}
}

// TestClients runs the clients' own code from npm (clients/: the OpenAI Node SDK 5.x and 6.x, their parse
// helpers on structured answers too, LibreChat's agents library, and Open WebUI's stream handling) against two
// proxies over the example index, one in front of a fake model and one offline. It needs node and `npm ci` in clients, so it runs only when RAGPROXY_NODE_TEST=1.
func TestClients(t *testing.T) {
	dir := nodetest.Dir(t, "RAGPROXY_NODE_TEST", "@librechat/agents")
	r, tok := exampleIndex(t)
	const key = "sk-clients"
	cfg := func(offline bool) server.Config {
		return server.Config{APIKeys: []string{key}, Models: []server.ModelAlias{{ID: "lakeshore"}},
			Grounder: &Grounder{Retriever: r, Tokenizer: tok, SiteName: "Lakeshore Polytechnic", Offline: offline}}
	}
	online := newHarness(t, cfg(false), openaitest.Config{Reply: modelLike})
	offline := newHarness(t, cfg(true), openaitest.Config{})
	for _, script := range [][]string{{"sdk.mjs", "openai"}, {"sdk.mjs", "openai5"},
		{"structured.mjs", "openai"}, {"structured.mjs", "openai5"}, {"librechat.mjs"}, {"openwebui.mjs"}} {
		t.Run(strings.Join(script, " "), func(t *testing.T) {
			nodetest.Run(t, dir, 3*time.Minute, []string{"RAGPROXY_ONLINE_URL=" + online.URL, "RAGPROXY_OFFLINE_URL=" + offline.URL,
				"RAGPROXY_API_KEY=" + key, "RAGPROXY_MODEL=lakeshore"}, script...)
		})
	}
}
