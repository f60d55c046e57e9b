// Package tooltest finds the programs tests compare weaver with (Python
// with networkx, Graphviz, sqlite3): a test that needs one that is not
// installed is skipped on a developer's machine and fails in CI
// (CI=true), where .ci/run installs them all: a skipped test is a failing
// test there.
//
// It also reads what Graphviz drew (ParseSVG: every text, node mark and
// edge of an SVG file) and measures its texts as Graphviz did
// (MeasureTexts), so that a test judges the picture a reader sees; and it
// reads a gzipped fixture or WARC file whole (Gunzip).
package tooltest
