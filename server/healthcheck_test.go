package server

import "testing"

// TestHealthURL checks the address the image's healthcheck asks for each form of --listen.
func TestHealthURL(t *testing.T) {
	for listen, want := range map[string]string{
		":8080":          "http://127.0.0.1:8080/readyz",
		"0.0.0.0:9000":   "http://127.0.0.1:9000/readyz",
		"[::]:8080":      "http://127.0.0.1:8080/readyz",
		"127.0.0.1:8080": "http://127.0.0.1:8080/readyz",
		"10.0.0.7:80":    "http://10.0.0.7:80/readyz",
		"[::1]:8080":     "http://[::1]:8080/readyz",
	} {
		if got := HealthURL(listen, "/readyz"); got != want {
			t.Errorf("HealthURL(%q) = %q, want %q", listen, got, want)
		}
	}
}
