package crawl

import (
	"fmt"
	"sort"
	"strings"
)

// SkipReason says why a page was not emitted.
type SkipReason string

// The reasons a page is skipped. Stats counts each one.
const (
	SkipTooLarge    SkipReason = "too large"       // body above Config.MaxBytes
	SkipContentType SkipReason = "not html/pdf"    // neither HTML nor PDF
	SkipHTTPError   SkipReason = "http error"      // status >= 400, or the request failed
	SkipRobots      SkipReason = "robots"          // disallowed by robots.txt
	SkipPrivate     SkipReason = "private address" // resolved to a private, loopback or link-local address
	SkipReadError   SkipReason = "read error"      // the body or the file could not be read
	SkipOffSite     SkipReason = "off site"        // a redirect left the host or the prefix
	SkipDuplicate   SkipReason = "duplicate"       // a redirect landed on a page already emitted
)

// Stats describes a crawl or a mirror read.
type Stats struct {
	// Pages is the number of pages emitted.
	Pages int
	// NotModified is the number of pages emitted as NotModified.
	NotModified int
	// Requests is the number of HTTP requests made (robots.txt and sitemaps
	// included); BodyBytes the response body bytes read. Zero for a mirror.
	Requests  int
	BodyBytes int64
	// Skipped counts the pages not emitted, by reason.
	Skipped map[SkipReason]int
}

func (s *Stats) skip(r SkipReason) {
	if s.Skipped == nil {
		s.Skipped = make(map[SkipReason]int)
	}
	s.Skipped[r]++
}

// SkippedTotal is the number of pages skipped for any reason.
func (s Stats) SkippedTotal() int {
	n := 0
	for _, c := range s.Skipped {
		n += c
	}
	return n
}

// String renders the stats on one line, reasons sorted, for logs and reports.
func (s Stats) String() string {
	reasons := make([]string, 0, len(s.Skipped))
	for r := range s.Skipped {
		reasons = append(reasons, string(r))
	}
	sort.Strings(reasons)
	parts := make([]string, 0, len(reasons))
	for _, r := range reasons {
		parts = append(parts, fmt.Sprintf("%s=%d", r, s.Skipped[SkipReason(r)]))
	}
	pages := fmt.Sprintf("%d pages", s.Pages)
	if s.NotModified > 0 {
		pages += fmt.Sprintf(" (%d not modified)", s.NotModified)
	}
	if len(parts) == 0 {
		return pages + ", none skipped"
	}
	return pages + ", skipped: " + strings.Join(parts, " ")
}
