package crawl

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ErrPrivateAddress is returned (wrapped) when a connection would reach a
// private, loopback, link-local or otherwise non-public address and
// Config.AllowPrivate is false.
var ErrPrivateAddress = errors.New("refusing non-public address")

// publicOnly is a net.Dialer Control function. It runs after name resolution,
// on the address actually dialled, so a public name that resolves to a private
// address (DNS rebinding) is refused as well.
func publicOnly(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, ErrPrivateAddress)
	}
	if !isPublic(ap.Addr()) {
		return fmt.Errorf("dial %s: %w", address, ErrPrivateAddress)
	}
	return nil
}

// isPublic reports whether a is a globally routable unicast address.
func isPublic(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsUnspecified() || a.IsLoopback() || a.IsPrivate() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() ||
		a.IsMulticast() {
		return false
	}
	if a.Is4() {
		b := a.As4()
		switch {
		case b[0] == 0: // "this network"
			return false
		case b[0] == 100 && b[1]&0xc0 == 64: // 100.64.0.0/10 carrier-grade NAT
			return false
		case b[0] == 192 && b[1] == 0 && b[2] == 0: // 192.0.0.0/24 IETF protocol assignments
			return false
		case b[0] == 198 && b[1]&0xfe == 18: // 198.18.0.0/15 benchmarking
			return false
		case b[0] >= 240: // reserved and broadcast
			return false
		}
	}
	return true
}

// guardedClient returns the client the crawler uses: a copy of c (or a new
// client), so the caller's value is never modified. With allowPrivate false,
// every connection goes through a dialer that refuses non-public addresses; the
// copy gets a clone of c's *http.Transport with that dialer. A client with
// another kind of RoundTripper is refused, because the guard could not be
// enforced. Unless c has its own CheckRedirect, redirects are followed up to 10
// times and only on host: a redirect elsewhere stops at the 3xx response. (The
// crawler reads robots.txt and sitemaps through this client; it follows the
// redirects of pages itself, with a copy that returns them.)
func guardedClient(c *http.Client, host string, allowPrivate bool, timeout time.Duration) (*http.Client, error) {
	var cc http.Client
	if c != nil {
		cc = *c
	} else {
		cc.Timeout = timeout
	}
	if cc.CheckRedirect == nil {
		cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			if c, ok := Canonical(nil, req.URL.String()); !ok || hostOf(c) != host {
				return http.ErrUseLastResponse
			}
			return nil
		}
	}
	if allowPrivate {
		return &cc, nil
	}
	var tr *http.Transport
	switch t := cc.Transport.(type) {
	case nil:
		tr = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		tr = t.Clone()
	default:
		return nil, fmt.Errorf("crawl: transport %T cannot enforce the private-address guard; set AllowPrivate or use an *http.Transport", t)
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: publicOnly}
	tr.DialContext = d.DialContext
	tr.DialTLSContext = nil
	tr.Proxy = nil // a proxy would dial on our behalf and bypass the check
	cc.Transport = tr
	return &cc, nil
}
