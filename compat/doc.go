// Package compat is OpenAI's chat-completions wire format at the edge of
// ragproxy: the request decoder and validator, the chunk and completion
// builders and readers, and OpenAI's error body. It is data only: it does
// not speak HTTP (package upstream sends requests, package server serves
// them).
//
// Decoding keeps every field a client sends as raw JSON so that vendor fields
// pass through unchanged; the proxy edits only what it must (model, messages,
// stream_options.include_usage). Chunks are relayed as the upstream's raw JSON
// and edited in place with sjson when needed, never re-encoded from typed
// structs; the relay reads what it needs of each chunk (ReadChunk) in one pass
// over its bytes that also validates them, building nothing of the rest.
//
// Functions are pure and safe for concurrent use; ReadChunk's Chunk belongs to
// one stream.
package compat
