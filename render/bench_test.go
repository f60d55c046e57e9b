package render_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/render"
)

// BenchmarkPool_Render renders the shells of a fake web (every host a
// ShellLinks shell, links added 200 ms after app.js runs), one and two tabs
// at once, and reports the wall time per page, and the browser's resident
// memory (its processes summed) at the end.
//
//	go test ./render -run '^$' -bench Pool_Render -benchtime 40x
func BenchmarkPool_Render(b *testing.B) {
	s := newSite(b, fakeweb.Config{Hosts: 200, Seed: 11, ShellEvery: 1, RobotsDisallowEvery: -1})
	hosts := s.web.Hosts()
	for _, tabs := range []int{1, 2} {
		b.Run(fmt.Sprintf("tabs=%d", tabs), func(b *testing.B) {
			p := newPool(b, s, func(c *render.Config) { c.Tabs = tabs; c.Logf = nil })
			mustRender(b, p, hosts[0]) // the browser's start is not a page's cost
			var mu sync.Mutex
			var busy time.Duration
			next := make(chan string)
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for range tabs {
				wg.Go(func() {
					for h := range next {
						res, err := p.Render(context.Background(), "http://"+h+"/")
						if err != nil {
							b.Error(err)
							continue
						}
						mu.Lock()
						busy += res.Took
						mu.Unlock()
					}
				})
			}
			for i := 0; i < b.N; i++ {
				next <- hosts[1+i%(len(hosts)-1)]
			}
			close(next)
			wg.Wait()
			wall := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "ms/page")
			b.ReportMetric(float64(busy.Milliseconds())/float64(b.N), "ms/render")
			b.ReportMetric(float64(p.RSS())/(1<<20), "browser-MiB")
		})
	}
}
