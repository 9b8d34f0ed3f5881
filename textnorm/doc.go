// Package textnorm turns text into the normalised words that both the lexical index (BM25) and the local
// embedder see, so a query and a document are compared on the same terms: lowercase Unicode letter and digit
// runs, with numbers, phone numbers, prices and ampersand abbreviations kept as single searchable words, an
// English stopword list, and the Porter stemmer. Text in another language takes its Language's analysis instead
// (NFKC and case folding, the language's Snowball stemmer and stopwords, CJK bigrams, compound splitting), and
// Detect tells a text's language.
//
// Everything here is a pure function of its input and safe for concurrent use.
package textnorm
