package server

import "testing"

func TestSmoke(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	resp, body := h.post(t, "/chat/completions", `{"model":"ragproxy","messages":[{"role":"user","content":"hi there"}],"stream":true}`)
	t.Log(resp.Status, resp.Header, body)
	resp, body = h.post(t, "/chat/completions", `{"model":"ragproxy","messages":[{"role":"user","content":"hi there"}]}`)
	t.Log(resp.Status, resp.Header, body)
}
