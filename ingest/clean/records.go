package clean

import (
	"errors"
	"hash/maphash"
	"strconv"
	"strings"

	"github.com/JohannesKaufmann/dom"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/net/html"
)

// Catalogue sites repeat records across pages: on the Berkeley guide the same course description appears on the
// department's page and on each of its programmes' pages, nearly half of all the course markup. records converts
// each distinct record once and splices its markdown into every page that repeats it.
//
// A record is a <div>, <section> or <article> with a class that at least one of its element siblings shares (a
// list of records), with at least minRecordNodes nodes, reached from the converted root through plain containers
// only (no list, table, quote, heading or inline element, which would give it context-dependent markdown such as a
// list indent), and followed in document order by the start of a block or the end of the root. Such a block
// converts to the same markdown wherever it stands: the converter's whitespace collapsing starts afresh at a block,
// a following block trims its trailing space, and the commonmark passes that look at neighbours stop at the
// record's own element or at the block after it.
//
// Before a page is converted, a known record's children are replaced by a placeholder word and a new record is
// framed by two marker paragraphs; after conversion, placeholders become the cached markdown and the markdown
// between markers is cached. A page whose markers do not come back intact is converted again without records.
type records struct {
	seed  maphash.Seed
	nonce string // makes marker words unlike any page text
	cache *lru.Cache[recordKey, string]
}

// recordKey identifies a record's subtree (and, when its links are relative to the page, the page URL): a
// 64-bit seeded hash of it, and its node count and hashed length, which two colliding records would also have to
// share.
type recordKey [2]uint64

// record is one record of the page being converted.
type record struct {
	node *html.Node
	key  recordKey
	md   string // cached markdown; "" for a new record
	hit  bool
}

const (
	minRecordNodes = 16
	// maxRecordNodes keeps records small, so that a page's tab panels (siblings with one class, but unique) are
	// searched for the records inside them.
	maxRecordNodes = 400
	maxRecords     = 1 << 15 // cached records; a few tens of megabytes at most
)

func newRecords() *records {
	c, _ := lru.New[recordKey, string](maxRecords) // only fails for a size <= 0
	m := &records{seed: maphash.MakeSeed(), cache: c}
	var h maphash.Hash
	h.SetSeed(m.seed)
	m.nonce = "zqrec" + strconv.FormatUint(h.Sum64(), 36)
	return m
}

// mark finds the records under root, replaces the children of cached ones by a placeholder and frames new ones
// with markers. pageURL enters the key of records whose links resolve against it.
func (m *records) mark(root *html.Node, pageURL string) []record {
	if !plainContainer(root.Data) || root.Type != html.ElementNode {
		return nil
	}
	site := pageURL
	if i := strings.Index(site, "://"); i >= 0 {
		if j := strings.IndexByte(site[i+3:], '/'); j >= 0 {
			site = site[:i+3+j]
		}
	}
	var recs []record
	var walk func(p *html.Node)
	walk = func(p *html.Node) {
		for c := p.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if isRecord(c) && blockFollows(c, root) {
				if key, n := m.key(c, site, pageURL); n >= minRecordNodes && n <= maxRecordNodes {
					recs = append(recs, record{node: c, key: key})
					continue
				}
			}
			if plainContainer(c.Data) {
				walk(c)
			}
		}
	}
	walk(root)
	for i := range recs {
		r := &recs[i]
		r.md, r.hit = m.cache.Get(r.key)
		id := strconv.Itoa(i)
		if r.hit {
			for c := r.node.FirstChild; c != nil; c = r.node.FirstChild {
				r.node.RemoveChild(c)
			}
			r.node.AppendChild(&html.Node{Type: html.TextNode, Data: m.nonce + "h" + id})
			continue
		}
		r.node.Parent.InsertBefore(markerParagraph(m.nonce+"s"+id), r.node)
		r.node.Parent.InsertBefore(markerParagraph(m.nonce+"e"+id), r.node.NextSibling)
	}
	return recs
}

func markerParagraph(word string) *html.Node {
	p := &html.Node{Type: html.ElementNode, Data: "p"}
	p.AppendChild(&html.Node{Type: html.TextNode, Data: word})
	return p
}

// splice turns the converted markdown of a page marked by mark into the page's markdown, caching new records. It
// reports false when a marker is missing or out of place.
func (m *records) splice(md string, recs []record) (string, bool) {
	if len(recs) == 0 {
		return md, true
	}
	var b strings.Builder
	b.Grow(len(md))
	next := 0   // the record whose marker comes next
	start := -1 // where the open record's markdown starts in md, or -1
	for pos := 0; pos < len(md); {
		i := strings.Index(md[pos:], m.nonce)
		if i < 0 {
			if start >= 0 {
				return "", false
			}
			b.WriteString(md[pos:])
			break
		}
		i += pos
		end := i + len(m.nonce)
		for end < len(md) && md[end] != '\n' {
			end++
		}
		word := md[i+len(m.nonce) : end]
		if len(word) < 2 || word[1:] != strconv.Itoa(next) || i > 0 && md[i-1] != '\n' {
			return "", false
		}
		r := &recs[next]
		switch word[0] {
		case 'h':
			if !r.hit || start >= 0 {
				return "", false
			}
			b.WriteString(md[pos:i])
			b.WriteString(r.md)
			next++
		case 's':
			if r.hit || start >= 0 {
				return "", false
			}
			b.WriteString(md[pos:i])
			start = end
		case 'e':
			if r.hit || start < 0 {
				return "", false
			}
			r.md = strings.Trim(md[start:i], "\n")
			m.cache.Add(r.key, r.md)
			b.WriteString(r.md)
			start = -1
			next++
		default:
			return "", false
		}
		pos = end
	}
	if next != len(recs) {
		return "", false
	}
	return b.String(), true
}

// key hashes the subtree of n and counts its nodes, stopping past maxRecordNodes. Links other than absolute and root-relative ones resolve
// against the page, so their records are keyed by page; the others by site.
func (m *records) key(n *html.Node, site, pageURL string) (recordKey, int) {
	var h maphash.Hash
	h.SetSeed(m.seed)
	size := 0
	write := func(s string) {
		h.WriteString(s)
		size += len(s)
	}
	writeByte := func(c byte) {
		h.WriteByte(c)
		size++
	}
	nodes, pageLinks := 0, false
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if nodes++; nodes > maxRecordNodes {
			return // too large to be a record: the caller looks inside
		}
		writeByte(byte(n.Type))
		write(n.Data)
		writeByte(0)
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if a.Key == "id" && a.Namespace == "" {
					// The converter never reads ids (html-to-markdown v2.5.2), and catalogues number the same
					// record differently on each page that shows it.
					continue
				}
				write(a.Namespace)
				writeByte(0)
				write(a.Key)
				writeByte(0)
				write(a.Val)
				writeByte(0)
				if (a.Key == "href" || a.Key == "src") && pageRelative(a.Val) {
					pageLinks = true
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		writeByte(1)
	}
	walk(n)
	if pageLinks {
		write(pageURL)
	} else {
		write(site)
	}
	return recordKey{h.Sum64(), uint64(nodes)<<32 | uint64(uint32(size))}, nodes
}

// pageRelative reports whether a link resolves against the page URL rather than only its scheme and host.
func pageRelative(v string) bool {
	v = strings.TrimSpace(v)
	switch {
	case strings.HasPrefix(v, "//"):
		return true
	case strings.HasPrefix(v, "/"):
		return false
	}
	lower := strings.ToLower(v)
	return !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") &&
		!strings.HasPrefix(lower, "mailto:") && !strings.HasPrefix(lower, "tel:")
}

// isRecord reports whether n is a record candidate: a block container with a class shared by an element
// sibling.
func isRecord(n *html.Node) bool {
	switch n.Data {
	case "div", "section", "article":
	default:
		return false
	}
	class := attr(n, "class")
	if class == "" {
		return false
	}
	for _, sibs := range [2]func(*html.Node) *html.Node{
		func(s *html.Node) *html.Node { return s.PrevSibling },
		func(s *html.Node) *html.Node { return s.NextSibling },
	} {
		for s := sibs(n); s != nil; s = sibs(s) {
			if s.Type == html.ElementNode && s.Data == n.Data && attr(s, "class") == class {
				return true
			}
		}
	}
	return false
}

// plainContainer reports whether tag only groups blocks: its content converts the same as without it.
func plainContainer(tag string) bool {
	switch tag {
	case "div", "section", "article", "main", "body":
		return true
	}
	return false
}

// blockFollows reports whether the next thing after n in document order, skipping whitespace-only text, is the
// start of a block element or the end of root.
func blockFollows(n, root *html.Node) bool {
	next := nextContent(n, root)
	return next == nil || next.Type == html.ElementNode && dom.NameIsBlockNode(next.Data)
}

// errRecords reports a page whose record markers did not survive conversion.
var errRecords = errors.New("record markers lost in conversion")
