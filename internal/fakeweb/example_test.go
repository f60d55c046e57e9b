package fakeweb_test

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

func ExampleLoop3() {
	w := fakeweb.Loop3()
	fmt.Println(w.Seed())
	edges := w.ExpectedEdges(10, fakeweb.DefaultExcluded)
	for _, e := range slices.SortedFunc(maps.Keys(edges), func(a, b [2]string) int {
		return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1]))
	}) {
		fmt.Println(e[0], "->", e[1])
	}
	// Output:
	// http://a.test/
	// a.test -> b.test
	// b.test -> c.test
	// c.test -> a.test
}

func ExampleNew() {
	w := fakeweb.New(fakeweb.Config{Hosts: 100, Seed: 42})
	fmt.Println(len(w.Hosts()), w.Seed() == "http://"+w.Hosts()[0]+"/")
	// Output: 100 true
}
