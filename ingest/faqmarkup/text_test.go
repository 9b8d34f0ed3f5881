package faqmarkup

import "testing"

func TestHTMLText(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
		inline         bool
	}{
		{name: "plain", in: "  two\n words  ", want: "two words"},
		{name: "paragraphs", in: "<p>One.</p>\n<p>Two <em>words</em>.</p>", want: "One.\n\nTwo words."},
		{name: "inline joins words", in: "<b>sp</b>lit and <i>kept</i> apart", want: "split and kept apart"},
		{name: "lists", in: "<p>Steps:</p><ol><li>one<ul><li>one a</li></ul></li><li><p>two</p></li><li></li></ol><p>After.</p>",
			want: "Steps:\n\n- one\n- one a\n- two\n\nAfter."},
		{name: "breaks and tables", in: "a<br>b<table><tr><td>x</td><td>y</td></tr><tr><td>z</td></tr></table>",
			want: "a\nb\n\nx y\nz"},
		{name: "pre keeps lines", in: "<pre>$ make\n$ make   test\n</pre>", want: "$ make\n$ make test"},
		{name: "no scripts, styles or buttons", in: "<p>Yes<script>x()</script><style>p{}</style><button>Copy</button>.</p>",
			want: "Yes."},
		{name: "entities and no-break spaces", in: "Fish&nbsp;&amp;&#160;chips", want: "Fish & chips"},
		{name: "inline mode", in: "<p>How do</p><ul><li>I <button>apply</button>?</li></ul>", inline: true,
			want: "How do I apply?"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := htmlText(tt.in, tt.inline); got != tt.want {
				t.Errorf("htmlText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
