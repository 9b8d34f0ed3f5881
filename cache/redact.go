package cache

import "net/url"

// redactURL hides the password of a URL; an unparsable URL is hidden whole, since it may still hold one.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable url>"
	}
	return u.Redacted()
}
