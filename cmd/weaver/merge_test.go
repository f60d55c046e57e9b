package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMerge_CLI(t *testing.T) {
	dir := t.TempDir()
	a := archiveStore(t, filepath.Join(dir, "a.bolt"), 6, nil)
	b := archiveStore(t, filepath.Join(dir, "b.bolt"), 9, nil)
	out := filepath.Join(dir, "all.bolt")
	code, stdout, errs := runArchiveCmd(t, "merge", "-o", out, a, b)
	// b's chain extends a's: 9 hosts; weights of the 5 shared edges double.
	if code != 0 || !strings.Contains(stdout, "merged 2 stores into "+out+": 9 nodes, 8 edges (total weight 51)") {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	if code, stdout, _ := runArchiveCmd(t, "check", "--db", out); code != 0 || !strings.HasPrefix(stdout, "ok: 9 nodes, 8 edges") {
		t.Errorf("check: exit %d %s", code, stdout)
	}
	// -o after the inputs, and --force to replace.
	if code, _, errs := runArchiveCmd(t, "merge", a, b, "--out", out, "--force"); code != 0 {
		t.Errorf("flags after inputs: exit %d\n%s", code, errs)
	}
}

func TestMerge_CLIUsage(t *testing.T) {
	dir := t.TempDir()
	a := archiveStore(t, filepath.Join(dir, "a.bolt"), 4, nil)
	b := archiveStore(t, filepath.Join(dir, "b.bolt"), 4, nil)
	before, _ := os.ReadFile(a)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no -o", []string{"merge", a, b}, "give the output file with -o"},
		{"no inputs", []string{"merge", "-o", filepath.Join(dir, "o.bolt")}, "give the stores to merge"},
		{"output is an input", []string{"merge", "-o", a, "--force", a, b}, "is also an input"},
		{"existing output", []string{"merge", "-o", b, a}, "already exists"},
		{"input twice", []string{"merge", "-o", filepath.Join(dir, "o.bolt"), a, a}, "twice"},
		{"missing input", []string{"merge", "-o", filepath.Join(dir, "o.bolt"), a, filepath.Join(dir, "none.bolt")}, "none.bolt: no such store"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := runArchiveCmd(t, tc.args...)
			if code != 2 || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, want 2 with %q\n%s", code, tc.want, errs)
			}
		})
	}
	if after, _ := os.ReadFile(a); string(after) != string(before) {
		t.Error("an input was modified")
	}
}
