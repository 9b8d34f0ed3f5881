// Package compat speaks OpenAI's chat-completions wire format at the edge of
// ragproxy: the request decoder and validator, the chunk and completion
// builders, OpenAI's error body, and the upstream client (built on
// github.com/openai/openai-go/v3) that retries and fails over to a second
// upstream before the first byte reaches the client.
//
// Decoding keeps every field a client sends as raw JSON so that vendor fields
// pass through unchanged; the proxy edits only what it must (model, messages,
// stream_options.include_usage). Chunks are relayed as the upstream's raw JSON
// and edited in place with sjson when needed, never re-encoded from typed
// structs.
//
// Functions are pure and safe for concurrent use; a Client is safe for
// concurrent use by many requests.
package compat
