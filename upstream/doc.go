// Package upstream sends chat requests to OpenAI-compatible servers: a
// Client (built on github.com/openai/openai-go/v3) that retries and fails
// over to a second upstream before the first byte reaches the client,
// bounds each attempt and each stream, and reports every attempt it made;
// and Asker, the one adapter from the project's llm.Ask to those requests.
//
// A Client and an Asker are safe for concurrent use by many requests; a
// Stream belongs to one reader.
package upstream
