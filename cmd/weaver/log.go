package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// logger writes log lines as "[LEVEL] msg" or JSON objects.
type logger struct {
	mu   sync.Mutex // serialises writes to w
	w    io.Writer
	json bool
}

func newLogger(w io.Writer, asJSON bool) *logger { return &logger{w: w, json: asJSON} }

func (l *logger) log(level, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.json {
		b, _ := json.Marshal(struct {
			Time  string `json:"time"`
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}{time.Now().UTC().Format(time.RFC3339Nano), strings.ToLower(level), msg})
		l.w.Write(append(b, '\n'))
		return
	}
	fmt.Fprintf(l.w, "[%s] %s\n", level, msg)
}
