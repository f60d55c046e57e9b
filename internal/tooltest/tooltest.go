package tooltest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Missing reports something a test needs that is not there: a skip, or
// with CI=true a failure.
func Missing(tb testing.TB, format string, a ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, a...)
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s (CI=true: what the tests need must be installed)", msg)
	}
	tb.Skipf("%s: skipped (CI fails instead)", msg)
}

// Tool returns the path of the program name, or reports it Missing.
func Tool(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(tb, "%s is not installed", name)
	}
	return p
}

// Python returns the first of pythons that imports every module of
// modules (comma-separated, as Python's import statement takes them), or
// reports it Missing with the Debian packages to install. With no
// pythons, the one on PATH, then the system's (/usr/bin/python3, where
// Debian's python3-networkx goes when PATH leads to another Python).
func Python(tb testing.TB, modules string, pythons ...string) string {
	tb.Helper()
	if len(pythons) == 0 {
		pythons = []string{"python3", "/usr/bin/python3"}
	}
	for _, p := range pythons {
		if exec.Command(p, "-c", "import "+modules).Run() == nil {
			return p
		}
	}
	var pkgs []string
	for _, m := range strings.Split(modules, ",") {
		pkgs = append(pkgs, "python3-"+strings.TrimSpace(m))
	}
	Missing(tb, "no python3 with %s (apt-get install %s)", modules, strings.Join(pkgs, " "))
	return ""
}

// LouvainModularity runs networkx's Louvain with the Python py on in:
// "n seeds", then a "u v w" line per edge (nodes 0..n-1). It returns the
// modularity of networkx's partition for each seed 0..seeds-1, on the
// undirected graph whose weights are summed both ways, self-loops left
// out (as weaver's layout leaves them out). A failing or silent Python
// fails the test.
func LouvainModularity(tb testing.TB, py string, in []byte) []float64 {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", networkxLouvain)
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		tb.Fatalf("networkx: %v\n%s", err, errb.String())
	}
	var qs []float64
	if err := json.Unmarshal(out.Bytes(), &qs); err != nil || len(qs) == 0 {
		tb.Fatalf("networkx said %q: %v", out.String(), err)
	}
	return qs
}

// networkxLouvain is LouvainModularity's script, for Python's -c.
const networkxLouvain = `
import sys, json
import networkx as nx
lines = sys.stdin.read().split("\n")
n, seeds = map(int, lines[0].split())
G = nx.Graph()
G.add_nodes_from(range(n))
for l in lines[1:]:
    if l:
        a, b, w = l.split()
        a, b, w = int(a), int(b), float(w)
        if a == b:
            continue
        if G.has_edge(a, b):
            G[a][b]["weight"] += w
        else:
            G.add_edge(a, b, weight=w)
qs = [nx.community.modularity(G, nx.community.louvain_communities(G, weight="weight", seed=s), weight="weight") for s in range(seeds)]
json.dump(qs, sys.stdout)
`

// Tmpfs mounts a tmpfs of size (mount's syntax: 256k, 64m) at dir for the
// test's lifetime: a real small file system to fill. Only root may mount
// (as .ci/run runs); elsewhere it is Missing. The returned function
// resizes it (remount), to give space back.
func Tmpfs(tb testing.TB, dir, size string) (resize func(size string)) {
	tb.Helper()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		Missing(tb, "cannot mount a small tmpfs (needs root): %s", strings.TrimSpace(string(out)))
	}
	tb.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return func(size string) {
		tb.Helper()
		if out, err := exec.Command("mount", "-o", "remount,size="+size, dir).CombinedOutput(); err != nil {
			tb.Fatalf("remount %s at %s: %v %s", dir, size, err, out)
		}
	}
}
