package e2e_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDocs_Layout: docs/development.md's Layout lists every package of the
// repository (every directory with Go files, testdata aside, the bench
// module's included), each on one line, and nothing that is not one: a
// newcomer's map of the code stays the code's.
func TestDocs_Layout(t *testing.T) {
	t.Parallel()
	var pkgs []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") {
			dir := filepath.ToSlash(strings.TrimPrefix(filepath.Dir(path), "../")) + "/"
			if !slices.Contains(pkgs, dir) {
				pkgs = append(pkgs, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]int{}
	in := false
	for _, l := range mdLines(readDoc(t, "docs/development.md")) {
		switch {
		case strings.HasPrefix(l.text, "## "):
			in = l.text == "## Layout"
		case in && l.code && strings.TrimSpace(l.text) != "":
			dir := strings.Fields(l.text)[0]
			listed[dir]++
			if listed[dir] == 2 {
				t.Errorf("docs/development.md:%d: %s is listed twice", l.n, dir)
			}
			if fi, err := os.Stat(filepath.Join("..", dir)); err != nil || !fi.IsDir() || !slices.Contains(pkgs, dir) {
				t.Errorf("docs/development.md:%d: %s is not a package of the repository", l.n, dir)
			}
		}
	}
	if len(pkgs) < 20 {
		t.Fatalf("found only %d packages: the walk misses them", len(pkgs))
	}
	for _, p := range pkgs {
		if listed[p] == 0 {
			t.Errorf("docs/development.md's Layout does not list %s", p)
		}
	}
}
