package robots

// Recovered returns how many panics of grobotstxt Allowed and CrawlDelay
// have recovered since the test binary started.
func Recovered() int64 { return recovered.Load() }

// Unprepared returns Parsed rules over body without the key lower-casing
// that FromResponse does, as a reference for it.
func Unprepared(body []byte) *Rules {
	return &Rules{kind: Parsed, status: 200, body: string(capBody(body))}
}
