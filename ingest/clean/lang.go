package clean

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Alternate is another language's version of a page, as a <link rel="alternate" hreflang> names it.
type Alternate struct {
	// Lang is the version's BCP 47 tag as the page gives it ("de", "fr-CA"); "x-default" names the page shown
	// when no language matches.
	Lang string
	// URL is the version's absolute URL.
	URL string
}

// markupLanguage reads the language the page's markup declares: the lang (or xml:lang) attribute of <html>,
// else a <meta http-equiv="content-language">'s first tag; and the page's hreflang alternates, links resolved
// against baseURL (documentBase). It looks at <html> and <head> only, before cleaning changes the tree.
func markupLanguage(root *html.Node, baseURL string) (lang string, alts []Alternate) {
	base, _ := url.Parse(baseURL)
	var meta string
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Html:
				if lang == "" {
					lang = strings.TrimSpace(attr(n, "lang"))
				}
				if lang == "" {
					lang = strings.TrimSpace(attr(n, "xml:lang"))
				}
			case atom.Meta:
				if strings.EqualFold(attr(n, "http-equiv"), "content-language") && meta == "" {
					meta = FirstLanguage(attr(n, "content"))
				}
			case atom.Link:
				if hl := strings.TrimSpace(attr(n, "hreflang")); hl != "" && hasToken(attr(n, "rel"), "alternate") {
					if href := strings.TrimSpace(attr(n, "href")); href != "" && base != nil {
						if u, err := base.Parse(href); err == nil {
							u.Fragment = ""
							alts = append(alts, Alternate{Lang: hl, URL: u.String()})
						}
					}
				}
			case atom.Body:
				return
			}
		}
		if depth > 3 {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth+1)
		}
	}
	walk(root, 0)
	if lang == "" {
		lang = meta
	}
	return lang, alts
}

// FirstLanguage is the first language tag of a Content-Language value (RFC 9110 section 8.5: a comma-separated
// list), or "".
func FirstLanguage(v string) string {
	first, _, _ := strings.Cut(v, ",")
	return strings.TrimSpace(first)
}

func hasToken(list, tok string) bool {
	for _, f := range strings.Fields(list) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}
