package e2e_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// testSuiteMarker precedes the README's apt-get line for the whole test
// suite; the README's other apt-get lines (what building and running
// weaver needs) are shorter on purpose.
const testSuiteMarker = "<!-- test-suite packages:"

// TestReadme_AptPackages: the README's apt-get line for the test suite and
// .ci/run name the same packages, so that a user who follows the README
// has what CI installs (without Recommends, where a missing name shows).
func TestReadme_AptPackages(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(readme), testSuiteMarker)
	if i < 0 {
		t.Fatalf("README has no %q marker before the test suite's apt-get line", testSuiteMarker)
	}
	m := regexp.MustCompile(`(?m)^\s*apt-get install --no-install-recommends ([^\n]+)$`).FindSubmatch(readme[i:])
	if m == nil {
		t.Fatal("README has no 'apt-get install --no-install-recommends …' line after the test-suite marker")
	}
	c := regexp.MustCompile(`(?m)^packages=\(([^)]*)\)$`).FindSubmatch(ci)
	if c == nil {
		t.Fatal(".ci/run has no packages=(…) line")
	}
	if !strings.Contains(string(ci), "--no-install-recommends") {
		t.Error(".ci/run installs with apt's Recommends: a package missing from the list would go unnoticed")
	}
	got, want := strings.Fields(string(m[1])), strings.Fields(string(c[1]))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("README installs %v, .ci/run %v", got, want)
	}
	// The lines before the marker (building weaver, --render, drawing DOT)
	// name only packages the tests install, so that what they ask for is
	// what was tested.
	lines := regexp.MustCompile(`(?m)^\s*apt-get install --no-install-recommends ([^\n#]+)`).FindAllSubmatch(readme[:i], -1)
	if len(lines) == 0 {
		t.Error("README has no apt-get line for building weaver before the test suite's")
	}
	for _, l := range lines {
		for _, p := range strings.Fields(string(l[1])) {
			if !slices.Contains(want, p) {
				t.Errorf("README's line %q installs %s, which .ci/run does not: the tests never ran with it", strings.TrimSpace(string(l[0])), p)
			}
		}
	}
	for _, p := range []string{"python3-scipy", "sqlite3", "graphviz", "python3-networkx", "libxml2-utils", "chromium", "qemu-user-static"} {
		if !slices.Contains(want, p) {
			t.Errorf("%s, which the tests use, is not installed", p)
		}
	}
}
