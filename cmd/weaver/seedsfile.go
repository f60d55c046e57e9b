package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/weaver-crawler/weaver/crawl"
)

// maxSeedLine bounds a line of a seeds file: a URL is far shorter, and a
// file that is not one (a binary, one endless line) is refused rather
// than read into memory.
const maxSeedLine = 64 << 10

// seedsFile is the file of --seeds-file: one seed URL a line, blank lines
// and lines starting with # skipped. It is read as a stream each time its
// Seeds are, so a million seeds are never all in memory; stdin ("-"),
// which can be read only once, is first copied to a temporary file.
type seedsFile struct {
	name string // as the user names it in errors: the path, or "stdin"
	path string // the file read
	temp bool   // path is stdin's copy, removed by Close
	n    int    // the seeds it holds, once checked
}

// openSeedsFile opens the seeds file at path ("-": e.Stdin, copied).
func openSeedsFile(e *env, path string) (*seedsFile, error) {
	if path != "-" {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, usagef("seeds file: %v", err)
		}
		if fi.IsDir() {
			return nil, usagef("seeds file %s is a directory", path)
		}
		return &seedsFile{name: path, path: path}, nil
	}
	if e.Stdin == nil {
		return nil, usagef("seeds file -: no stdin")
	}
	f, err := os.CreateTemp("", "weaver-seeds-*.txt")
	if err != nil {
		return nil, fmt.Errorf("seeds from stdin: %w", err)
	}
	_, err = io.Copy(f, e.Stdin)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("seeds from stdin: %w", err)
	}
	return &seedsFile{name: "stdin", path: f.Name(), temp: true}, nil
}

// Close removes stdin's copy.
func (f *seedsFile) Close() {
	if f != nil && f.temp {
		os.Remove(f.path)
	}
}

// maxBadSeedLines is how many bad lines of a seeds file an error names;
// the others are counted.
const maxBadSeedLines = 20

// Seeds streams the file's seed URLs. A line is a URL, optionally
// followed by whitespace and a # comment. Every line that is not (no
// http(s) URL, other text after it) is named with where it is,
// seeds.txt:12: , up to maxBadSeedLines and then counted, in one error
// returned at the end; the lines after a bad one are still checked but
// not yielded. An error yield returns stops the stream, wrapped the same
// way, unless it is a seed refused (crawl.ErrSeed), which is named with
// the bad lines.
func (f *seedsFile) Seeds() crawl.Seeds {
	return func(yield func(string) error) error {
		file, err := os.Open(f.path)
		if err != nil {
			return fmt.Errorf("seeds file: %w", err)
		}
		defer file.Close()
		sc := bufio.NewScanner(file)
		sc.Buffer(make([]byte, 0, 4096), maxSeedLine)
		var bad []error
		nbad := 0
		line := 0
		for sc.Scan() {
			line++
			s := strings.TrimSpace(sc.Text())
			if line == 1 {
				s = strings.TrimPrefix(s, "\ufeff") // a byte order mark
			}
			if s == "" || strings.HasPrefix(s, "#") {
				continue
			}
			err := seedLine(&s)
			if err == nil && nbad == 0 {
				err = yield(s)
				if err != nil && !errors.Is(err, crawl.ErrSeed) {
					return fmt.Errorf("%s:%d: %w", f.name, line, err)
				}
			}
			if err != nil {
				if nbad++; nbad <= maxBadSeedLines {
					bad = append(bad, fmt.Errorf("%s:%d: %w", f.name, line, err))
				}
			}
		}
		if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: line longer than %d KiB: not a file of URLs, one a line", f.name, line+1, maxSeedLine>>10)
		} else if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		if nbad > maxBadSeedLines {
			bad = append(bad, fmt.Errorf("%s: and %d more bad lines (%d in all)", f.name, nbad-maxBadSeedLines, nbad))
		}
		return errors.Join(bad...)
	}
}

// seedLine checks one line of a seeds file, trimmed and not a comment: a
// URL weaver crawls, then nothing but a # comment after whitespace. It
// leaves the URL alone in s.
func seedLine(s *string) error {
	u, rest, _ := strings.Cut(*s, " ")
	if i := strings.IndexAny(u, "\t"); i >= 0 {
		u, rest = u[:i], u[i+1:]+" "+rest
	}
	rest = strings.TrimSpace(rest)
	if err := crawl.CheckURL(u); err != nil {
		if rest != "" && !strings.HasPrefix(rest, "#") {
			// Words, not a URL: they are quoted, not the first alone.
			words := strings.Fields(*s)
			if i := slices.IndexFunc(words, func(w string) bool { return strings.HasPrefix(w, "#") }); i >= 0 {
				words = words[:i]
			}
			if lerr := crawl.CheckURL(strings.Join(words, " ")); lerr != nil {
				return lerr
			}
		}
		return err
	}
	if rest != "" && !strings.HasPrefix(rest, "#") {
		return fmt.Errorf("text after the URL %s: %q (one URL a line; a comment starts with #)", u, rest)
	}
	*s = u
	return nil
}

// concatSeeds is the seeds of a, then those of b.
func concatSeeds(a, b crawl.Seeds) crawl.Seeds {
	return func(yield func(string) error) error {
		if err := a(yield); err != nil {
			return err
		}
		return b(yield)
	}
}
