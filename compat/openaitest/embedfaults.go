package openaitest

import (
	"net/http"
)

// embeddingFaults are the faults injected into embeddings requests, kept apart from the chat faults so that a
// test can fail one endpoint while the other answers (serve's query embeddings failing while its answers do not).
type embeddingFaults struct {
	queued []Fault
	always *Fault
}

// FailEmbeddings queues faults for the next embeddings requests, one each. Status, Body, RetryAfter, Drop, Hang
// and Delay apply; the stream faults do not.
func (s *Server) FailEmbeddings(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedFaults.queued = append(s.embedFaults.queued, faults...)
}

// FailEmbeddingsAlways injects f into every embeddings request after the queued faults; nil stops it.
func (s *Server) FailEmbeddingsAlways(f *Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedFaults.always = f
}

// embeddingFault takes the fault for the embeddings request rec and applies it; done reports that the request
// was answered (or abandoned) by it.
func (s *Server) embeddingFault(w http.ResponseWriter, r *http.Request, rec *Request) (done bool) {
	s.mu.Lock()
	var f *Fault
	if q := s.embedFaults.queued; len(q) > 0 {
		f, s.embedFaults.queued = &q[0], q[1:]
	} else if s.embedFaults.always != nil {
		c := *s.embedFaults.always
		f = &c
	}
	rec.Fault = f
	s.mu.Unlock()
	if f == nil {
		return false
	}
	if !sleepCtx(r.Context(), f.Delay) {
		return true
	}
	switch {
	case f.Hang:
		<-r.Context().Done()
		return true
	case f.Drop:
		panic(http.ErrAbortHandler) // closes the connection without a response
	case f.Status != 0:
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		writeError(w, f.Status, f.Body, rec.Model, f.ContentType)
		return true
	}
	return false
}
