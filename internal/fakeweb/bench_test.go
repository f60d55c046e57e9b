package fakeweb_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

// BenchmarkServeHome measures home pages served through the handler, without
// a network: requests per second and bytes per second.
func BenchmarkServeHome(b *testing.B) {
	w := fakeweb.New(fakeweb.Config{Hosts: 1000, Seed: 1})
	hosts := w.Hosts()
	reqs := make([]*http.Request, len(hosts))
	for i, h := range hosts {
		reqs[i] = httptest.NewRequest(http.MethodGet, "http://"+h+"/", nil)
	}
	var bytes int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		rec := httptest.NewRecorder()
		w.ServeHTTP(rec, reqs[i%len(reqs)])
		bytes += int64(rec.Body.Len())
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(bytes)/b.Elapsed().Seconds()/1e6, "MB/s")
}

// BenchmarkServeHome_Parallel is BenchmarkServeHome on every CPU.
func BenchmarkServeHome_Parallel(b *testing.B) {
	w := fakeweb.New(fakeweb.Config{Hosts: 1000, Seed: 1})
	hosts := w.Hosts()
	var next, bytes atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			rec := httptest.NewRecorder()
			w.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://"+hosts[i%int64(len(hosts))]+"/", nil))
			bytes.Add(int64(rec.Body.Len()))
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(bytes.Load())/b.Elapsed().Seconds()/1e6, "MB/s")
}

// BenchmarkExpectedEdges measures the ground truth of a 10,000-host web.
func BenchmarkExpectedEdges(b *testing.B) {
	w := fakeweb.New(fakeweb.Config{Hosts: 10_000, Seed: 1})
	for b.Loop() {
		w.ExpectedEdges(10, fakeweb.DefaultExcluded)
	}
}
