package server

import (
	"net/http"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/valyala/fasthttp"
)

// The request's headers reach groundings, the cache key and the question log as net/http would read them:
// canonical keys, repeated headers in order, and copies that outlive fasthttp's reuse of the request.
func TestRequestHeaderReadsLikeNetHTTP(t *testing.T) {
	for _, normalize := range []bool{true, false} {
		var rc fasthttp.RequestCtx
		if !normalize {
			rc.Request.Header.DisableNormalizing()
		}
		rc.Request.Header.Set("x-openwebui-task", "title_generation")
		rc.Request.Header.Add("X-Forwarded-For", "10.0.0.1")
		rc.Request.Header.Add("x-forwarded-for", "10.0.0.2")
		rc.Request.Header.Set("Authorization", "Bearer k")
		rc.Request.Header.SetContentType("application/json")
		want := http.Header{}
		for k, v := range rc.Request.Header.All() {
			want.Add(string(k), string(v))
		}
		app := fiber.New()
		c := app.AcquireCtx(&rc)
		got := requestHeader(c)
		app.ReleaseCtx(c)
		rc.Request.Header.Set("Authorization", "Bearer changed")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("normalizing %v (-net/http +got):\n%s", normalize, diff)
		}
		if v := got.Values("X-Forwarded-For"); len(v) != 2 || v[1] != "10.0.0.2" {
			t.Errorf("normalizing %v: X-Forwarded-For %q, want both values in order", normalize, v)
		}
		got.Add("X-Openwebui-Task", "more") // appending to one key leaves the next key's value alone
		if got.Get("X-Forwarded-For") != "10.0.0.1" || got.Get("Authorization") != "Bearer k" {
			t.Errorf("normalizing %v: an append changed another header: %v", normalize, got)
		}
	}
}
