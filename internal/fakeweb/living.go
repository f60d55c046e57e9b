package fakeweb

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Living is a small web that changes while a crawler crawls it (issue
// 27): volatile hosts publish a new edition of their home page every
// Period, with other links; stable hosts never change. Every home page
// carries validators (an ETag per edition, Last-Modified its publication
// time) and a conditional request whose validator matches is answered 304
// Not Modified without a body. Served logs every home-page answer, so a
// test computes the graph a correct crawl recorded at any time from what
// the web itself sent.
//
// Hosts are h0.test … h<N-1>.test; h0.test is the seed and links to every
// other host. Host i ≥ 1 links to h0.test and to h<j>.test where j is
// 1 + (i + edition) mod (N-1), skipping itself; a stable host's edition
// is always 0.
type Living struct {
	cfg   LivingConfig
	start time.Time

	mu     sync.Mutex
	served []Served
	robots []Served // robots.txt answers: Host, At, Status
}

// LivingConfig describes a Living web.
type LivingConfig struct {
	Hosts    int           // hosts, the seed included; at least 3 (0: 8)
	Volatile int           // hosts h1 … h<Volatile> change every Period
	Period   time.Duration // 0: one second
	Now      func() time.Time
	// Robots, when set, is host i's robots.txt at t; "" answers 404, as
	// every robots.txt is answered without it.
	Robots func(i int, t time.Time) string
}

// Served is one answer of a home page.
type Served struct {
	Host        string
	At          time.Time // when the answer was decided
	Status      int       // 200 or 304
	Edition     int
	Conditional bool     // the request carried a validator
	Links       []string // the hosts the edition links to (also for a 304)
	Bytes       int      // body bytes sent
}

// NewLiving makes a Living web whose clock starts now.
func NewLiving(cfg LivingConfig) *Living {
	if cfg.Hosts < 3 {
		cfg.Hosts = 8
	}
	if cfg.Period <= 0 {
		cfg.Period = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Living{cfg: cfg, start: cfg.Now()}
}

// Seed is the crawl's seed URL.
func (l *Living) Seed() string { return "http://h0.test/" }

// Host is the name of host i.
func (l *Living) Host(i int) string { return fmt.Sprintf("h%d.test", i) }

// Volatile reports whether host i changes.
func (l *Living) Volatile(i int) bool { return i >= 1 && i <= l.cfg.Volatile }

// Edition is host i's edition at t.
func (l *Living) Edition(i int, t time.Time) int {
	if !l.Volatile(i) || t.Before(l.start) {
		return 0
	}
	return int(t.Sub(l.start) / l.cfg.Period)
}

// Links are the hosts host i's edition links to, sorted.
func (l *Living) Links(i, edition int) []string {
	n := l.cfg.Hosts
	if i == 0 {
		out := make([]string, 0, n-1)
		for j := 1; j < n; j++ {
			out = append(out, l.Host(j))
		}
		sort.Strings(out)
		return out
	}
	out := []string{l.Host(0)}
	j := 1 + (i+edition)%(n-1)
	if j == i {
		j = 1 + (j)%(n-1)
	}
	out = append(out, l.Host(j))
	sort.Strings(out)
	return out
}

func (l *Living) index(host string) int {
	host = normalizeHost(host)
	var i int
	if _, err := fmt.Sscanf(host, "h%d.test", &i); err != nil || i < 0 || i >= l.cfg.Hosts || l.Host(i) != host {
		return -1
	}
	return i
}

func (l *Living) etag(i, edition int) string { return fmt.Sprintf(`"h%d-e%d"`, i, edition) }

// ServeHTTP answers robots.txt (404 unless Config.Robots gives one) and
// home pages by edition.
func (l *Living) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	i := l.index(r.Host)
	if i >= 0 && r.URL.Path == "/robots.txt" {
		l.mu.Lock()
		now := l.cfg.Now()
		body := ""
		if l.cfg.Robots != nil {
			body = l.cfg.Robots(i, now)
		}
		status := http.StatusOK
		if body == "" {
			status = http.StatusNotFound
		}
		l.robots = append(l.robots, Served{Host: l.Host(i), At: now, Status: status, Bytes: len(body)})
		l.mu.Unlock()
		if status == http.StatusNotFound {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "text/plain")
		_, _ = rw.Write([]byte(body))
		return
	}
	if i < 0 || r.URL.Path != "/" {
		http.NotFound(rw, r)
		return
	}
	l.mu.Lock()
	now := l.cfg.Now()
	ed := l.Edition(i, now)
	tag := l.etag(i, ed)
	published := l.start.Add(time.Duration(ed) * l.cfg.Period).UTC().Truncate(time.Second)
	inm := r.Header.Get("If-None-Match")
	ims := r.Header.Get("If-Modified-Since")
	status := http.StatusOK
	if inm != "" && inm == tag {
		status = http.StatusNotModified
	}
	links := l.Links(i, ed)
	var body strings.Builder
	if status == http.StatusOK {
		fmt.Fprintf(&body, "<!doctype html><html><head><title>%s edition %d</title></head><body><h1>%s</h1>\n", l.Host(i), ed, l.Host(i))
		for _, h := range links {
			fmt.Fprintf(&body, "<p><a href=\"http://%s/\">%s</a></p>\n", h, h)
		}
		fmt.Fprintf(&body, "<p>%s</p></body></html>\n", strings.Repeat("filler ", 200))
	}
	l.served = append(l.served, Served{Host: l.Host(i), At: now, Status: status, Edition: ed,
		Conditional: inm != "" || ims != "", Links: links, Bytes: body.Len()})
	l.mu.Unlock()
	rw.Header().Set("ETag", tag)
	rw.Header().Set("Last-Modified", published.Format(http.TimeFormat))
	if status == http.StatusNotModified {
		rw.WriteHeader(status)
		return
	}
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	rw.WriteHeader(status)
	_, _ = rw.Write([]byte(body.String()))
}

// RobotsServed returns the robots.txt answers so far, in order (Host,
// At, Status, Bytes).
func (l *Living) RobotsServed() []Served {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Served(nil), l.robots...)
}

// Served returns the home-page answers so far, in order.
func (l *Living) Served() []Served {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Served(nil), l.served...)
}

// ExpectedAt is the host graph a correct crawl recorded at t from what
// the web served: for each host, the links of its last answer at or
// before t, each of weight 1 (one page per host).
func (l *Living) ExpectedAt(t time.Time) map[[2]string]int {
	last := map[string]Served{}
	for _, s := range l.Served() {
		if !s.At.After(t) {
			last[s.Host] = s
		}
	}
	out := map[[2]string]int{}
	for h, s := range last {
		for _, to := range s.Links {
			out[[2]string{h, to}] = 1
		}
	}
	return out
}

// Start serves the web on addr until Close.
func (l *Living) Start(addr string) (*Server, error) { return startHandler(l, addr) }
