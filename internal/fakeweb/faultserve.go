package fakeweb

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// streamStart writes the headers of a response whose body is streamed, lifting
// the server's write deadline for it. It reports whether a body should follow.
func streamStart(rw http.ResponseWriter, r *http.Request, contentLength int) bool {
	rc := http.NewResponseController(rw)
	// Not every ResponseWriter has deadlines (httptest's has none); the
	// stream then simply runs under whatever the server imposes.
	if err := rc.SetWriteDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return false
	}
	h := rw.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Server", "fakeweb")
	if contentLength >= 0 {
		h.Set("Content-Length", strconv.Itoa(contentLength))
	}
	rw.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return false
	}
	return r.Method != http.MethodHead
}

// fillChunk returns 64 KiB of link-free markup, built once.
var fillChunk = sync.OnceValue(func() []byte {
	r := newRNG(0, streamFill, 0)
	b := make([]byte, 0, 64<<10)
	for len(b) < 64<<10 {
		b = append(b, "<p>"...)
		for k, n := 0, 20+r.intn(40); k < n; k++ {
			b = append(b, pick(r, fillerWords)...)
			b = append(b, ' ')
		}
		b = append(b, "</p>\n"...)
	}
	return b[:64<<10]
})

const streamHead = "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>Still loading</title>\n</head>\n<body>\n"

// slowDrip writes one byte a second until the client leaves.
func slowDrip(rw http.ResponseWriter, r *http.Request) {
	if !streamStart(rw, r, -1) {
		return
	}
	rc := http.NewResponseController(rw)
	body := streamHead + "<p>" + strings.Repeat("drip ", 64)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for k := 0; ; k++ {
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
		c := body[k%len(body)]
		if _, err := rw.Write([]byte{c}); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

// endless writes filler markup as fast as the client takes it, until it leaves.
func endless(rw http.ResponseWriter, r *http.Request) {
	if !streamStart(rw, r, -1) {
		return
	}
	if _, err := rw.Write([]byte(streamHead)); err != nil {
		return
	}
	chunk := fillChunk()
	for r.Context().Err() == nil {
		if _, err := rw.Write(chunk); err != nil {
			return
		}
	}
}

const hugeSize = 50 << 20

// huge writes a 50 MiB page without links.
func huge(rw http.ResponseWriter, r *http.Request) {
	if !streamStart(rw, r, hugeSize) {
		return
	}
	const tail = "</body>\n</html>\n"
	if _, err := rw.Write([]byte(streamHead)); err != nil {
		return
	}
	chunk := fillChunk()
	left := hugeSize - len(streamHead) - len(tail)
	for left > 0 {
		n := min(left, len(chunk))
		if _, err := rw.Write(chunk[:n]); err != nil {
			return
		}
		left -= n
	}
	// The last write error, like the others, means the client left.
	_, _ = rw.Write([]byte(tail))
}

// serveGzipBomb writes the gzip bomb with Content-Encoding: gzip.
func serveGzipBomb(rw http.ResponseWriter, r *http.Request) {
	bomb, err := gzipBomb()
	if err != nil {
		http.Error(rw, "fakeweb: "+err.Error(), http.StatusInternalServerError)
		return
	}
	rw.Header().Set("Content-Encoding", "gzip")
	if !streamStart(rw, r, len(bomb)) {
		return
	}
	_, _ = rw.Write(bomb) // an error means the client left
}

// resetMidBody promises a 30,000-byte page, sends 8 KiB of it and resets the
// connection.
func resetMidBody(rw http.ResponseWriter, r *http.Request) {
	hj, ok := rw.(http.Hijacker)
	if !ok {
		// HTTP/2 or a recorder: aborting is the nearest thing to a reset.
		panic(http.ErrAbortHandler)
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	defer conn.Close()
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 30000\r\nServer: fakeweb\r\nConnection: close\r\n\r\n"
	if _, err := brw.WriteString(head); err != nil {
		return
	}
	if r.Method != http.MethodHead {
		part := append([]byte(streamHead), fillChunk()[:8<<10-len(streamHead)]...)
		if _, err := brw.Write(part); err != nil {
			return
		}
	}
	if err := brw.Flush(); err != nil {
		return
	}
	// Let the client read what was sent: a reset can discard data still
	// queued at the receiver, turning "mid-body" into "before headers".
	if !wait(r.Context(), 50*time.Millisecond) {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		// Linger 0 makes Close send RST instead of FIN.
		if err := tc.SetLinger(0); err != nil {
			return
		}
	}
}

const hugeRobotsSize = 10 << 20

// hugeRobots returns a 10 MiB robots.txt that allows /, built once.
var hugeRobots = sync.OnceValue(func() []byte {
	b := make([]byte, 0, hugeRobotsSize+64)
	b = append(b, "User-agent: *\nAllow: /\nDisallow: /private/\n"...)
	for k := 0; len(b) < hugeRobotsSize; k++ {
		b = append(b, "Disallow: /archive/"...)
		b = strconv.AppendInt(b, int64(k), 10)
		b = append(b, "/\n"...)
	}
	return b[:hugeRobotsSize]
})

// trapHost parses a CalendarTrap subdomain d<N>.trap-<host> and returns the
// next one in the chain.
func (w *Web) trapHost(host string) (next, trap string, ok bool) {
	d, rest, found := strings.Cut(host, ".trap-")
	if !found || len(d) < 2 || d[0] != 'd' {
		return "", "", false
	}
	n, err := strconv.Atoi(d[1:])
	if err != nil || n < 1 {
		return "", "", false
	}
	i, known := w.index[rest]
	if !known || w.sites[i].fault&CalendarTrap == 0 {
		return "", "", false
	}
	return "d" + strconv.Itoa(n+1) + ".trap-" + rest, rest, true
}

func trapHostPage(next, trap string) string {
	return "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>Another day at " + trap +
		"</title>\n</head>\n<body>\n<p><a href=\"http://" + next + "/\">Next day</a></p>\n<p><a href=\"/calendar?date=2024-01-01\">Calendar</a></p>\n</body>\n</html>\n"
}

// calendarPage links to the next and previous days, for ever.
func calendarPage(date string) string {
	day, err := time.Parse(time.DateOnly, date)
	if err != nil {
		day = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	next := day.AddDate(0, 0, 1).Format(time.DateOnly)
	prev := day.AddDate(0, 0, -1).Format(time.DateOnly)
	return "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>Calendar " + day.Format(time.DateOnly) +
		"</title>\n</head>\n<body>\n<p><a href=\"?date=" + next + "\">Next day</a> <a href=\"/calendar?date=" + prev +
		"\">Previous day</a> <a href=\"/a/\">Archive</a></p>\n</body>\n</html>\n"
}

// isDeepPath reports whether path is /a/, /a/a/, /a/a/a/, ...
func isDeepPath(path string) bool {
	if len(path) < 3 || len(path)%2 != 1 {
		return false
	}
	for k := 0; k+2 < len(path)+1; k += 2 {
		if path[k:k+2] != "/a" {
			return false
		}
	}
	return strings.HasSuffix(path, "/")
}

// deepPage links one level deeper, for ever.
func deepPage(path string) string {
	return "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>Archive " + strconv.Itoa(len(path)/2) +
		"</title>\n</head>\n<body>\n<p><a href=\"a/\">Older</a> <a href=\"/\">Home</a></p>\n</body>\n</html>\n"
}
