package server

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/ragproxy/ragproxy/compat"
)

// fromOpenWebUI reports a request Open WebUI sent: it carries X-OpenWebUI-* headers (the user and chat headers
// of ENABLE_FORWARD_USER_INFO_HEADERS, or a connection's X-OpenWebUI-Task).
func fromOpenWebUI(h http.Header) bool {
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "x-openwebui-") {
			return true
		}
	}
	return false
}

// withOpenWebUISources adds to a completion body, for a request from Open WebUI, its answer's source events as
// the top-level "sources" Open WebUI reads in non-stream answers (it reads message.annotations only in streams,
// so a non-stream chat would show no citations); any other client never sees the field. A body it cannot edit
// is sent as it is.
func withOpenWebUISources(body []byte, h http.Header, events []json.RawMessage) []byte {
	if len(events) == 0 || !fromOpenWebUI(h) {
		return body
	}
	if b, err := compat.SetOpenWebUISources(body, events); err == nil {
		return b
	}
	return body
}
