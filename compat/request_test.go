package compat

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var decodeTests = []struct {
	name      string
	body      string
	wantErr   string // param of the 400, "" for success
	wantRoles []string
}{
	{name: "string content", body: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, wantRoles: []string{"user"}},
	{name: "n answers", body: `{"n":3,"messages":[{"role":"user","content":"hi"}]}`, wantRoles: []string{"user"}},
	{name: "parts content", body: `{"messages":[{"role":"system","content":[{"type":"text","text":"a"}]},{"role":"user","content":[{"type":"text","text":"b"},{"type":"image_url","image_url":{"url":"data:"}}]}]}`,
		wantRoles: []string{"system", "user"}},
	{name: "tool round trip", body: `{"messages":[{"role":"developer","content":"d"},{"role":"user","content":"u"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}]}`,
		wantRoles: []string{"developer", "user", "assistant", "tool"}},
	{name: "legacy function role", body: `{"messages":[{"role":"function","name":"f","content":null}]}`, wantRoles: []string{"function"}},
	{name: "not json", body: `{"messages":`, wantErr: "-"},
	{name: "array body", body: `[]`, wantErr: "-"},
	{name: "null body", body: `null`, wantErr: "-"},
	{name: "missing messages", body: `{"model":"m"}`, wantErr: "messages"},
	{name: "messages not array", body: `{"messages":"hi"}`, wantErr: "messages"},
	{name: "empty messages", body: `{"messages":[]}`, wantErr: "messages"},
	{name: "message not object", body: `{"messages":[1]}`, wantErr: "messages[0]"},
	{name: "missing role", body: `{"messages":[{"content":"x"}]}`, wantErr: "messages[0].role"},
	{name: "bad role", body: `{"messages":[{"role":"user","content":"x"},{"role":"bot","content":"x"}]}`, wantErr: "messages[1].role"},
	{name: "role not string", body: `{"messages":[{"role":7,"content":"x"}]}`, wantErr: "messages[0].role"},
	{name: "user content null", body: `{"messages":[{"role":"user","content":null}]}`, wantErr: "messages[0].content"},
	{name: "content number", body: `{"messages":[{"role":"user","content":3}]}`, wantErr: "messages[0].content"},
	{name: "part without type", body: `{"messages":[{"role":"user","content":[{"text":"x"}]}]}`, wantErr: "messages[0].content[0].type"},
	{name: "assistant empty", body: `{"messages":[{"role":"assistant"}]}`, wantErr: "messages[0].content"},
	{name: "tool without id", body: `{"messages":[{"role":"tool","content":"r"}]}`, wantErr: "messages[0].tool_call_id"},
	{name: "model not string", body: `{"model":1,"messages":[{"role":"user","content":"x"}]}`, wantErr: "model"},
	{name: "stream not bool", body: `{"stream":"yes","messages":[{"role":"user","content":"x"}]}`, wantErr: "stream"},
	{name: "stream in another case", body: `{"sTream":true,"messages":[{"role":"user","content":"x"}]}`, wantErr: "sTream"},
	{name: "stream twice", body: `{"stream":false,"stream":true,"messages":[{"role":"user","content":"x"}]}`, wantErr: "stream"},
	{name: "model in another case", body: `{"Model":"m","messages":[{"role":"user","content":"x"}]}`, wantErr: "Model"},
	{name: "unread fields in any case pass", body: `{"Temperature":1,"temperature":0,"messages":[{"role":"user","content":"x"}]}`, wantRoles: []string{"user"}},
	{name: "n not a number", body: `{"n":"2","messages":[{"role":"user","content":"x"}]}`, wantErr: "n"},
	{name: "n not an integer", body: `{"n":1.5,"messages":[{"role":"user","content":"x"}]}`, wantErr: "n"},
	{name: "n zero", body: `{"n":0,"messages":[{"role":"user","content":"x"}]}`, wantErr: "n"},
	{name: "n too large", body: `{"n":129,"messages":[{"role":"user","content":"x"}]}`, wantErr: "n"},
	{name: "n far too large", body: `{"n":1e6,"messages":[{"role":"user","content":"x"}]}`, wantErr: "n"},
	{name: "n null", body: `{"n":null,"messages":[{"role":"user","content":"x"}]}`, wantRoles: []string{"user"}},
	{name: "include_usage not bool", body: `{"stream":true,"stream_options":{"include_usage":1},"messages":[{"role":"user","content":"x"}]}`, wantErr: "stream_options.include_usage"},
}

func TestDecodeChatRequest(t *testing.T) {
	for _, tt := range decodeTests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := DecodeChatRequest([]byte(tt.body))
			if tt.wantErr != "" {
				var ae *APIError
				if !errors.As(err, &ae) || ae.Status != 400 {
					t.Fatalf("err = %v, want a 400 *APIError", err)
				}
				param := ae.Param
				if tt.wantErr == "-" {
					param = "-"
				}
				if diff := cmp.Diff(tt.wantErr, param); diff != "" {
					t.Errorf("param (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := wantN(tt.body); req.N != want {
				t.Errorf("N = %d, want %d", req.N, want)
			}
			var roles []string
			for _, m := range req.Messages {
				roles = append(roles, m.Role)
			}
			if diff := cmp.Diff(tt.wantRoles, roles); diff != "" {
				t.Errorf("roles (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUpstreamBody(t *testing.T) {
	tests := []struct {
		name, body, model, messages, want string
	}{
		{name: "stream forces usage, keeps vendor fields",
			body: `{"model":"ragproxy","stream":true,"stream_options":{"x":1},"top_k":3,"messages":[{"role":"user","content":"q"}]}`, model: "gpt-4o-mini",
			want: `{"messages":[{"role":"user","content":"q"}],"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true,"x":1},"top_k":3}`},
		{name: "client asked usage: untouched",
			body: `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"q"}]}`,
			want: `{"messages":[{"role":"user","content":"q"}],"model":"m","stream":true,"stream_options":{"include_usage":true}}`},
		{name: "non-stream gets no stream_options, messages replaced",
			body: `{"messages":[{"role":"user","content":"q"}],"max_tokens":5}`, model: "x", messages: `[{"role":"user","content":"new"}]`,
			want: `{"max_tokens":5,"messages":[{"role":"user","content":"new"}],"model":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := DecodeChatRequest([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			var msgs []byte
			if tt.messages != "" {
				msgs = []byte(tt.messages)
			}
			got, err := req.UpstreamBody(tt.model, msgs)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMessageText(t *testing.T) {
	req, err := DecodeChatRequest([]byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"},{"type":"text","text":"b"}]},{"role":"user","content":"plain"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := []string{req.Messages[0].Text(), req.Messages[1].Text()}
	if diff := cmp.Diff([]string{"a\nb", "plain"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// FuzzDecodeChatRequest: any body either decodes into messages with valid
// roles or fails with a 400 APIError; it never panics, and a decoded request
// always yields a valid upstream body.
func FuzzDecodeChatRequest(f *testing.F) {
	for _, tt := range decodeTests {
		f.Add([]byte(tt.body))
	}
	f.Add([]byte(`{"model":"gpt-\u00e9","stream":false,"m\u006fdel":"x","messages":[{"role":"user","content":"q"}]}`))
	f.Add([]byte(`{"model":"caf\xc3","stream":"true","messages":[{"role":"user","content":"q"}],"n":null}`))
	f.Add([]byte(`[{"model":"m"}]`))
	f.Add([]byte(`null`))
	f.Add([]byte("{ \"z\" : [ 1 , {\"a\" : \"<b>&amp;\u2028\"} ] ,\n\"messages\":[{\"role\":\"user\",\"content\":\"a < b & c\"}],\"k\\u00e9y\":true, \"x y\":null,\"<k>\":1}"))
	f.Fuzz(func(t *testing.T, body []byte) {
		// The body's fields, and the values the decoder reads without reflection, are json.Unmarshal's.
		var wantFields map[string]json.RawMessage
		werr := json.Unmarshal(body, &wantFields)
		gotFields, gerr := decodeFields(body)
		if (gerr != nil) != (werr != nil) || gerr != nil && gerr.Error() != werr.Error() || !reflect.DeepEqual(gotFields, wantFields) {
			t.Fatalf("decodeFields = %q, %v; json.Unmarshal = %q, %v", gotFields, gerr, wantFields, werr)
		}
		for _, raw := range wantFields {
			var ws, gs string
			werr, gerr := json.Unmarshal(raw, &ws), decodeString(raw, &gs)
			if (gerr != nil) != (werr != nil) || gs != ws {
				t.Fatalf("decodeString(%s) = %q, %v; json.Unmarshal = %q, %v", raw, gs, gerr, ws, werr)
			}
			var wb, gb bool
			werr, gerr = json.Unmarshal(raw, &wb), decodeBool(raw, &gb)
			if (gerr != nil) != (werr != nil) || gb != wb {
				t.Fatalf("decodeBool(%s) = %v, %v; json.Unmarshal = %v, %v", raw, gb, gerr, wb, werr)
			}
		}
		req, err := DecodeChatRequest(body)
		if err != nil {
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != 400 {
				t.Fatalf("error %v is not a 400 APIError", err)
			}
			if len(ae.JSON()) == 0 {
				t.Fatal("empty error body")
			}
			return
		}
		if len(req.Messages) == 0 {
			t.Fatal("accepted a request without messages")
		}
		var so map[string]json.RawMessage
		wantUsage := false
		if raw := req.Fields["stream_options"]; raw != nil && json.Unmarshal(raw, &so) == nil && so["include_usage"] != nil {
			_ = json.Unmarshal(so["include_usage"], &wantUsage)
		}
		if req.IncludeUsage != wantUsage {
			t.Fatalf("IncludeUsage = %v, json.Unmarshal reads %v", req.IncludeUsage, wantUsage)
		}
		// Each message's role and text are those json.Unmarshal reads (the last of a key sent twice).
		var wantMsgs []map[string]json.RawMessage
		if err := json.Unmarshal(req.Fields["messages"], &wantMsgs); err != nil || len(wantMsgs) != len(req.Messages) {
			t.Fatalf("accepted messages json.Unmarshal reads as %d, %v", len(wantMsgs), err)
		}
		for i, m := range req.Messages {
			if !validRoles[m.Role] {
				t.Fatalf("accepted role %q", m.Role)
			}
			var role string
			_ = json.Unmarshal(wantMsgs[i]["role"], &role)
			if m.Role != role || m.Text() != contentText(wantMsgs[i]["content"]) {
				t.Fatalf("message %d: role %q text %q; json.Unmarshal: %q %q", i, m.Role, m.Text(), role, contentText(wantMsgs[i]["content"]))
			}
		}
		up, err := req.UpstreamBody("m", nil)
		if err != nil {
			t.Fatalf("upstream body: %v", err)
		}
		// The upstream body's encoding is json.Marshal's, byte for byte.
		got, err := marshalFields(req.Fields)
		want, werr := json.Marshal(req.Fields)
		if err != nil || werr != nil || !bytes.Equal(got, want) {
			t.Fatalf("marshalFields = %s, %v; json.Marshal = %s, %v", got, err, want, werr)
		}
		if _, err := DecodeChatRequest(up); err != nil {
			t.Fatalf("upstream body does not decode: %v\n%s", err, up)
		}
	})
}

// wantN is the "n" of a valid test body: 1 unless it sets one.
func wantN(body string) int {
	var b struct{ N *int }
	if json.Unmarshal([]byte(body), &b) != nil || b.N == nil {
		return 1
	}
	return *b.N
}

// TestDecodeStrict checks the strict decoding of the admin and feedback bodies: an unknown field is named in
// OpenAI's unknown_parameter error, broken JSON is invalid JSON, and a good body decodes.
func TestDecodeStrict(t *testing.T) {
	var v struct {
		ID     string `json:"id"`
		Rating string `json:"rating"`
	}
	if err := DecodeStrict([]byte(`{"id":"a","rating":"up"}`), &v); err != nil || v.ID != "a" || v.Rating != "up" {
		t.Errorf("good body: %+v, %v", v, err)
	}
	err := DecodeStrict([]byte(`{"id":"a","stars":5}`), &v)
	if ae := AsAPIError(err); ae.Status != 400 || ae.Code != "unknown_parameter" || ae.Param != "stars" {
		t.Errorf("unknown field: %+v", ae)
	}
	err = DecodeStrict([]byte(`{"id":`), &v)
	if ae := AsAPIError(err); ae.Status != 400 || ae.Message != msgInvalidJSON {
		t.Errorf("broken JSON: %+v", ae)
	}
}
