package e2e_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadme_AptPackages: the README's apt-get line and .ci/run name the
// same packages, so that a user who follows the README has what CI
// installs (without Recommends, where a missing name shows).
func TestReadme_AptPackages(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*apt-get install --no-install-recommends ([^\n]+)$`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("README has no 'apt-get install --no-install-recommends …' line")
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
	for _, p := range []string{"python3-scipy", "sqlite3", "graphviz", "python3-networkx", "libxml2-utils", "chromium", "qemu-user-static"} {
		if !slices.Contains(want, p) {
			t.Errorf("%s, which the tests use, is not installed", p)
		}
	}
}
