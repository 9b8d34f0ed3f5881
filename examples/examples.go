// Package examples bundles the example site that `ragproxy demo` serves: a fictional college website written for
// this project (see README.md in this directory), with questions over it for tests.
package examples

import "embed"

// Site is the example site as a mirror: site/a/b/index.html is BaseURL + "a/b/".
//
//go:embed site
var Site embed.FS

// BaseURL is the address the example site's pages are indexed under.
const BaseURL = "https://www.lakeshore-poly.example/"

// Questions is the JSONL question set over the example site (the format of eval.LoadQuestions).
//
//go:embed questions.jsonl
var Questions []byte

// FAQ is the example site's operator FAQ (YAML, the format of `serve --faq`), which `ragproxy demo` serves.
//
//go:embed faq.yaml
var FAQ []byte
