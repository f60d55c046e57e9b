package export_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/layout"
)

// TestDOT_NodeWithoutPosition: a layout given for the store's graph but
// lacking a host (which weaver's own layouts never do) still gives a DOT
// file Graphviz draws, every host in it: layout=nop refuses a node
// without a position, so the file asks for neato and says why.
func TestDOT_NodeWithoutPosition(t *testing.T) {
	dot := tooltest.Tool(t, "dot")
	s := smallStore(t)
	opt := fixedOptions()
	err := s.View(func(tx *kv.Tx) error {
		st, err := layout.ComputeStored(context.Background(), tx, layout.Options{})
		if err != nil {
			return err
		}
		last := len(st.IDs) - 1
		st.IDs, st.X, st.Y, st.Community = st.IDs[:last], st.X[:last], st.Y[:last], st.Community[:last]
		opt.Layout = st
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	st, err := export.DOT(context.Background(), &b, s, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "layout=neato") || !strings.Contains(b.String(), "1 hosts have no position") {
		t.Errorf("no neato for the host without a position:\n%s", b.String())
	}
	d := tooltest.ParseSVG(t, runTool(t, b.Bytes(), dot, "-Tsvg"))
	if uint64(len(d.Nodes)) != st.Nodes {
		t.Errorf("the SVG draws %d nodes, the export wrote %d", len(d.Nodes), st.Nodes)
	}
}
