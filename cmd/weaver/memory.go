package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// availableMemory returns how many bytes of memory this process may still
// take, and where the figure comes from: the kernel's MemAvailable, or the
// room left under the memory limit of the process's control group (a
// container's, cgroup v2 memory.max or v1 memory.limit_in_bytes) when that
// is less. It returns 0 when neither can be read.
func availableMemory() (uint64, string) {
	avail, from := memInfoAvailable(), "MemAvailable in /proc/meminfo"
	if room, path := cgroupRoom(); room > 0 && (avail == 0 || room < avail) {
		avail, from = room, "the memory limit of control group "+path
	}
	return avail, from
}

func memInfoAvailable() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// cgroupRoom is the memory limit of the process's control group less
// what the group uses, and the group's path; 0 when it has no limit or
// none can be read.
func cgroupRoom() (uint64, string) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, ""
	}
	for _, line := range strings.Split(string(bytes.TrimSpace(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var limitFile, usageFile string
		switch {
		case parts[0] == "0" && parts[1] == "": // cgroup v2
			for _, root := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
				if _, err := os.Stat(filepath.Join(root, parts[2], "memory.max")); err == nil {
					limitFile, usageFile = filepath.Join(root, parts[2], "memory.max"), filepath.Join(root, parts[2], "memory.current")
					break
				}
			}
		case strings.Contains(","+parts[1]+",", ",memory,"): // cgroup v1
			dir := filepath.Join("/sys/fs/cgroup/memory", parts[2])
			limitFile, usageFile = filepath.Join(dir, "memory.limit_in_bytes"), filepath.Join(dir, "memory.usage_in_bytes")
		}
		if limitFile == "" {
			continue
		}
		limit, ok := readUint(limitFile)
		if !ok || limit >= 1<<62 { // "max", or v1's no limit (a page-rounded 2^63)
			continue
		}
		used, _ := readUint(usageFile)
		if used >= limit {
			return 1, parts[2]
		}
		return limit - used, parts[2]
	}
	return 0, ""
}

func readUint(path string) (uint64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	return n, err == nil
}

// memoryShort returns an error saying that computing what for the graph
// of s (its counts) takes about need(nodes, edges) bytes of memory and
// less is left, with where to run it instead; nil when it fits or what is
// left cannot be read. weaver layout and weaver rank check it before they
// read the graph, so that a store too big for the machine gets a clear
// error and not an out-of-memory kill hours in.
func memoryShort(s *kv.Store, what string, need func(nodes, edges uint64) uint64) error {
	avail, from := availableMemory()
	if avail == 0 {
		return nil
	}
	var c graph.Counts
	if err := s.View(func(tx *kv.Tx) error { c = graph.GetCounts(tx); return nil }); err != nil {
		return err
	}
	if n := need(c.Nodes, c.Edges); n > avail {
		return fmt.Errorf("%s of %s takes %s: run it on a machine with more memory (weaver snapshot copies the store)",
			what, graphSize(c), memoryLeft(n, avail, from))
	}
	return nil
}

// graphSize is "N hosts and M edges", for the memory messages.
func graphSize(c graph.Counts) string {
	return count(c.Nodes, "host", "") + " and " + count(c.Edges, "edge", "")
}

// memoryLeft says that need bytes are wanted and avail are left, from
// where that is read (availableMemory).
func memoryLeft(need, avail uint64, from string) string {
	return fmt.Sprintf("about %s of memory, and %s is left (%s)", humanBytes(int64(need)), humanBytes(int64(avail)), from)
}
