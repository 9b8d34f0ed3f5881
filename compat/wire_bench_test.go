package compat

import "testing"

// chunkSample is a content chunk as OpenAI streams it.
var chunkSample = []byte(`{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741569952,` +
	`"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306",` +
	`"choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}],"usage":null}`)

// BenchmarkParseChunk reads one chunk on its own.
func BenchmarkParseChunk(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseChunk(chunkSample); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadChunk reads chunk after chunk of one stream, the relay's work for each chunk of every answer it
// passes through.
func BenchmarkReadChunk(b *testing.B) {
	var c Chunk
	b.ReportAllocs()
	for b.Loop() {
		if err := ReadChunk(chunkSample, &c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadChunkFastjson is BenchmarkReadChunk with the fastjson reader the relay used before scanChunk.
func BenchmarkReadChunkFastjson(b *testing.B) {
	var c Chunk
	b.ReportAllocs()
	for b.Loop() {
		if err := readChunkFastjson(chunkSample, &c); err != nil {
			b.Fatal(err)
		}
	}
}

// chatBody is a streaming request of a short conversation, as a chat client sends it.
var chatBody = []byte(`{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"temperature":0.7,` +
	`"messages":[{"role":"system","content":"You are a helpful assistant for the university's website."},` +
	`{"role":"user","content":"How much is tuition for international students?"},` +
	`{"role":"assistant","content":"Tuition for nonresident students is listed on the fees page."},` +
	`{"role":"user","content":[{"type":"text","text":"And for graduate students?"}]}]}`)

// BenchmarkDecodeChatRequest decodes and validates one chat request, the proxy's first work on every request.
func BenchmarkDecodeChatRequest(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeChatRequest(chatBody); err != nil {
			b.Fatal(err)
		}
	}
}
