package e2e_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/kv"
)

// SCRATCH: not to be committed.
func TestScratchMapProfile(t *testing.T) {
	scripts := os.Getenv("SCRATCH_SCRIPTS")
	if scripts == "" {
		t.Skip()
	}
	base := "/tmp/mapab/map-base.html"
	if _, err := os.Stat(base); err != nil {
		store, _, _ := mapStore(t, 20_000)
		s, err := kv.Open(store, kv.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		f, _ := os.Create(base)
		if _, err := export.HTML(context.Background(), f, s, export.Options{}); err != nil {
			t.Fatal(err)
		}
		f.Close()
		s.Close()
	}
	raw, _ := os.ReadFile(base)
	i := strings.LastIndex(string(raw), "<script>")
	j := strings.LastIndex(string(raw), "</script>")
	for _, sc := range strings.Split(scripts, ",") {
		js, err := os.ReadFile(sc)
		if err != nil {
			t.Fatal(err)
		}
		page := "/tmp/mapab/page.html"
		os.WriteFile(page, []byte(string(raw[:i+8])+string(js)+string(raw[j:])), 0o644)
		br := newBrowser(t)
		br.open("file://"+page, "#stats")
		br.waitFor("the graph", `document.getElementById('stats').dataset.state === 'done'`, 2*time.Minute)
		br.waitFor("the layout to stop", `!weaverMap.layoutRunning()`, 2*time.Minute)
		br.eval(instrument, nil)
		if os.Getenv("SCRATCH_SHOTS") != "" {
			br.eval(`(() => { const c = weaverMap.renderer.getCamera(); c.setState({x: 0.5, y: 0.5, ratio: 1, angle: 0}); window.__done = c.animate({ratio: 0.4, x: 0.45, y: 0.5}, {duration: 3000, easing: 'linear'}); return true; })()`, nil)
			time.Sleep(1500 * time.Millisecond)
			os.WriteFile("/tmp/mapab/mid.png", br.screenshot(), 0o644)
			time.Sleep(8 * time.Second)
			var st map[string]any
			br.eval(`({lod: weaverMap.renderer.lodMoving, moving: weaverMap.renderer.getCamera().isAnimated()})`, &st)
			t.Logf("after: %v", st)
			os.WriteFile("/tmp/mapab/rest.png", br.screenshot(), 0o644)
			k, h := br.clickBiggestHost()
			t.Logf("clicked %s %s", k, h)
			continue
		}
		if os.Getenv("SCRATCH_MODES") != "" {
			patches, _ := os.ReadFile("/tmp/mapab/patches.js")
			br.eval(string(patches), nil)
		}
		for _, mode := range strings.Split(os.Getenv("SCRATCH_MODES"), ";") {
			if mode != "" {
				br.eval("window.__setModes('"+mode+"')", nil)
			}
			for k := 0; k < 2; k++ {
				var r struct{ Frames, MS, Settle float64 }
				br.evalWithin(10*time.Minute, panZoom, &r)
				var prof map[string]float64
				br.eval(`window.__prof()`, &prof)
				t.Logf("%s [%s]: fps %.1f settle %.0f prof %v", sc, mode, r.Frames/r.MS*1000, r.Settle/3, prof)
			}
		}
	}
}

const instrument = `(() => {
	const R = weaverMap.renderer;
	const acc = {};
	const wrap = (obj, name, label) => {
		const f = obj[name];
		obj[name] = function (...a) {
			const t0 = performance.now();
			const r = f.apply(this, a);
			const d = performance.now() - t0;
			acc[label] = (acc[label] || 0) + d;
			acc[label + '#'] = (acc[label + '#'] || 0) + 1;
			return r;
		};
	};
	wrap(R, 'render', 'render');
	wrap(R, 'renderLabels', 'labels');
	wrap(R, 'clear', 'clear');
	wrap(R, 'resize', 'resize');
	wrap(R, 'renderHighlightedNodes', 'highlighted');
	wrap(R, 'process', 'process');
	for (const k in R.nodePrograms) wrap(R.nodePrograms[k], 'render', 'node:' + k);
	for (const k in R.edgePrograms) wrap(R.edgePrograms[k], 'render', 'edge:' + k);
	window.__prof = () => { const o = {...acc}; for (const k in acc) delete acc[k]; for (const k in o) o[k] = Math.round(o[k]); return o; };
	return true;
})()`
