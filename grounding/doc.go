// Package grounding is ragproxy's retrieval-augmented generation behind the gateway's Grounder seam: for each
// chat request it analyses the conversation, retrieves pages and passages from a site index, and either adds them
// as context for the model (with the grounding prompt) or, without a model, answers from them itself. As the
// answer streams it removes links the context does not hold, ends the answer with the Sources list of the pages it
// cited, and describes those pages in the shapes clients understand (Open WebUI source events). Section
// assistants (Assistant) are further model ids whose requests retrieve only from the pages under their URL
// prefixes. It also caches query analyses and serves POST /v1/retrieve.
//
// The approach follows the FHNW RAG chatbot prototype (T. Petrov, a ToBIT paper of the BSc Business Information
// Technology at FHNW, supervised by T. Hanne), generalised to any site.
//
// A Grounder is safe for concurrent use once configured.
package grounding
