// Command storestats prints what each bucket of a weaver store costs on
// disk: pages (branch, leaf, overflow) times the page size, the bytes in
// use, keys, and each as bytes per edge of the edges bucket. It is a
// performance tool (docs/performance.md), read-only.
//
//	go run ./internal/tools/storestats weaver.bolt
package main

import (
	"fmt"
	"os"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: storestats FILE")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "storestats:", err)
		os.Exit(1)
	}
}

type row struct {
	name        string
	keys        int
	pages       int
	inuse       int
	depth       int
	branch, lef int
}

func run(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		ps := db.Info().PageSize
		var rows []row
		edges := 0
		err := tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			s := b.Stats()
			pages := s.BranchPageN + s.BranchOverflowN + s.LeafPageN + s.LeafOverflowN
			r := row{name: string(name), keys: s.KeyN, pages: pages, inuse: s.BranchInuse + s.LeafInuse + s.InlineBucketInuse, depth: s.Depth,
				branch: s.BranchPageN, lef: s.LeafPageN}
			if r.name == "edges" {
				edges = s.KeyN
			}
			rows = append(rows, r)
			return nil
		})
		if err != nil {
			return err
		}
		sort.Slice(rows, func(i, j int) bool { return rows[i].pages > rows[j].pages })
		// weaver grows the file a MiB ahead of its pages (bbolt's own
		// steps: to the doubled map size, then 16 MiB at a time): the
		// high-water mark is what a store of this content needs. A
		// read-only open does not load bbolt's list of free pages: the
		// pages below the mark that no bucket holds are counted instead
		// (free pages, the list itself, the two meta pages and the root).
		hw := int(tx.Size())
		held := 0
		for _, r := range rows {
			held += r.pages
		}
		fmt.Printf("file %d B (%.1f B/edge); pages to the high-water mark %d B (%.1f B/edge); page %d B, %d edges; pages in no bucket %d\n",
			fi.Size(), per(int(fi.Size()), edges), hw, per(hw, edges), ps, edges, hw/ps-held)
		fmt.Printf("%-10s %10s %8s %12s %12s %8s %9s %6s\n", "bucket", "keys", "pages", "disk B", "in use B", "B/edge", "fill", "depth")
		totalDisk := 0
		for _, r := range rows {
			disk := r.pages * ps
			totalDisk += disk
			fill := 0.0
			if disk > 0 {
				fill = float64(r.inuse) / float64(disk)
			}
			fmt.Printf("%-10s %10d %8d %12d %12d %8.1f %8.0f%% %6d\n", r.name, r.keys, r.pages, disk, r.inuse, per(disk, edges), fill*100, r.depth)
		}
		fmt.Printf("%-10s %10s %8s %12d %12s %8.1f\n", "buckets", "", "", totalDisk, "", per(totalDisk, edges))
		return nil
	})
}

func per(n, edges int) float64 {
	if edges == 0 {
		return 0
	}
	return float64(n) / float64(edges)
}
