package e2e_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// readmeMaxLines is how long README.md may grow: it is the user's guide,
// and what does not fit belongs in docs/.
const readmeMaxLines = 350

// docFiles are the Markdown files whose links are checked: README.md and
// docs/*.md, as paths from the repository's root.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md")
	}
	files := []string{"README.md"}
	for _, d := range docs {
		files = append(files, strings.TrimPrefix(d, "../"))
	}
	return files
}

func readDoc(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mdLine is one line of a Markdown file outside code, or one line of code.
type mdLine struct {
	n    int // 1-based line number
	text string
	code bool // inside a fenced or indented code block
}

// mdLines splits a Markdown text into lines and marks those inside fenced
// code blocks and indented code blocks (4+ spaces after a blank line, or
// after another such line).
func mdLines(text string) []mdLine {
	var out []mdLine
	fenced, indented, prevBlank := false, false, true
	for i, l := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(trim, "```"):
			fenced = !fenced
			out = append(out, mdLine{i + 1, l, true})
			prevBlank = false
			continue
		case fenced:
			out = append(out, mdLine{i + 1, l, true})
			continue
		}
		if trim == "" {
			out = append(out, mdLine{i + 1, l, indented})
			prevBlank = true
			continue
		}
		lead := len(l) - len(strings.TrimLeft(l, " "))
		indented = lead >= 4 && (prevBlank || indented)
		out = append(out, mdLine{i + 1, l, indented})
		prevBlank = false
	}
	return out
}

var (
	codeSpan   = regexp.MustCompile("`[^`]*`")
	mdLink     = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	htmlHref   = regexp.MustCompile(`(?:href|src)="([^"]+)"`)
	headingRe  = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	inlineLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// anchors returns the anchors GitHub gives a Markdown file's headings:
// the text lower-cased, without punctuation but hyphens and underscores,
// spaces made hyphens, and -1, -2… after a repeated one.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range mdLines(text) {
		if l.code {
			continue
		}
		m := headingRe.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		h := inlineLink.ReplaceAllString(m[2], "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestDocs_LinksResolve: every relative link and #anchor in README.md and
// docs/*.md names a file of the repository and, for a Markdown file, one
// of its headings; README.md stays at most readmeMaxLines long.
func TestDocs_LinksResolve(t *testing.T) {
	t.Parallel()
	files := docFiles(t)
	texts := map[string]string{}
	for _, f := range files {
		texts[f] = readDoc(t, f)
	}
	anchorsOf := func(file string) map[string]bool {
		text, ok := texts[file]
		if !ok {
			text = readDoc(t, file)
			texts[file] = text
		}
		return anchors(text)
	}
	links := 0
	for _, f := range files {
		for _, l := range mdLines(texts[f]) {
			if l.code {
				continue
			}
			text := codeSpan.ReplaceAllString(l.text, "")
			var targets []string
			for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
				targets = append(targets, m[1])
			}
			for _, m := range htmlHref.FindAllStringSubmatch(text, -1) {
				targets = append(targets, m[1])
			}
			for _, target := range targets {
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				path, anchor, _ := strings.Cut(target, "#")
				dest := f
				if path != "" {
					dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(f), path)))
					if strings.HasPrefix(dest, "..") {
						t.Errorf("%s:%d: link %s leaves the repository", f, l.n, target)
						continue
					}
					if _, err := os.Stat(filepath.Join("..", dest)); err != nil {
						t.Errorf("%s:%d: link %s: no file %s", f, l.n, target, dest)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s:%d: link %s: an anchor in %s, which is not Markdown", f, l.n, target, dest)
					continue
				}
				if !anchorsOf(dest)[anchor] {
					t.Errorf("%s:%d: link %s: %s has no heading #%s", f, l.n, target, dest, anchor)
				}
			}
		}
	}
	if links < 20 {
		t.Errorf("found only %d relative links: the parser misses them", links)
	}
	if n := strings.Count(texts["README.md"], "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to docs/", n, readmeMaxLines)
	}
}

// TestDocs_Anchors checks the anchor rule against headings of the kinds
// the docs use.
func TestDocs_Anchors(t *testing.T) {
	t.Parallel()
	got := anchors("# The map\n\n## What the page polls: /map/data\n\n    # not a heading\n\n" +
		"## Writing WARC: weaver crawl --warc\n## The page's script\n## Settings\n## Settings\n" +
		"## A deeper host graph: pages per host, typed links, scope, mirrors\n### [Ranks](x.md) `rank`\n")
	for _, want := range []string{"the-map", "what-the-page-polls-mapdata", "writing-warc-weaver-crawl---warc",
		"the-pages-script", "settings", "settings-1", "a-deeper-host-graph-pages-per-host-typed-links-scope-mirrors", "ranks-rank"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a line of code became a heading")
	}
}

// shellComment is a comment at the end of a command line.
var shellComment = regexp.MustCompile(`(^|\s)#.*$`)

// shellSplit cuts a command line into the commands it runs: at pipes,
// &&, ;, &, and around $( … ) and ( … ).
var shellSplit = regexp.MustCompile(`\|\|?|&&?|;|\$\(|[()]`)

// weaverCall is a command that runs weaver: after a prompt, environment
// assignments or sudo, the binary (weaver, bin/weaver, ./weaver), the
// subcommand and its arguments.
var weaverCall = regexp.MustCompile(`^(?:\$\s+)?(?:[A-Z_]+=\S*\s+)*(?:sudo\s+)?(?:\./|bin/)?weaver\s+([a-z]+)\b(.*)$`)

// flagToken is a flag in a command line.
var flagToken = regexp.MustCompile(`(?:^|\s)--?([a-z][a-z0-9-]*)`)

// TestDocs_CommandFlags: every weaver command shown in README.md and
// docs/*.md (in code blocks and code spans) is a command of the binary,
// and every flag it is given is one that command has, as `weaver CMD -h`
// lists them.
func TestDocs_CommandFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	help := weaver(t, dir, "help")
	if help.code != 0 {
		t.Fatalf("weaver help: exit %d\n%s", help.code, help.stderr)
	}
	commands := map[string]string{} // command → its -h text
	sc := bufio.NewScanner(strings.NewReader(help.stdout))
	inCommands := false
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "Commands:") {
			inCommands = true
			continue
		}
		if inCommands {
			f := strings.Fields(l)
			if len(f) == 0 {
				break
			}
			commands[f[0]] = ""
		}
	}
	if len(commands) < 10 {
		t.Fatalf("weaver help lists only %v", commands)
	}
	flagsOf := func(cmd string) string {
		if h := commands[cmd]; h != "" || cmd == "help" || cmd == "version" {
			return h
		}
		r := weaver(t, dir, cmd, "-h")
		if r.code != 0 {
			t.Fatalf("weaver %s -h: exit %d\n%s", cmd, r.code, r.stderr)
		}
		commands[cmd] = r.stdout + r.stderr
		return commands[cmd]
	}
	calls := 0
	for _, f := range docFiles(t) {
		var code []mdLine
		for _, l := range mdLines(readDoc(t, f)) {
			if l.code {
				code = append(code, l)
				continue
			}
			for _, s := range codeSpan.FindAllString(l.text, -1) {
				code = append(code, mdLine{l.n, strings.Trim(s, "`"), true})
			}
		}
		// A line ending in a backslash goes on in the next one.
		for i := 0; i < len(code); i++ {
			l := code[i]
			for strings.HasSuffix(strings.TrimSpace(l.text), `\`) && i+1 < len(code) {
				i++
				l.text = strings.TrimSuffix(strings.TrimSpace(l.text), `\`) + " " + code[i].text
			}
			for _, seg := range shellSplit.Split(shellComment.ReplaceAllString(l.text, ""), -1) {
				m := weaverCall.FindStringSubmatch(strings.Trim(strings.TrimSpace(seg), `"'`))
				if m == nil {
					continue
				}
				cmd, args := m[1], m[2]
				if _, ok := commands[cmd]; !ok {
					t.Errorf("%s:%d: weaver %s: no such command (%q)", f, l.n, cmd, strings.TrimSpace(l.text))
					continue
				}
				calls++
				h := flagsOf(cmd)
				for _, fl := range flagToken.FindAllStringSubmatch(args, -1) {
					name := fl[1]
					if name == "h" || name == "help" {
						continue
					}
					if !strings.Contains(h, "\n  -"+name+" ") && !strings.Contains(h, "\n  -"+name+"\n") {
						t.Errorf("%s:%d: weaver %s has no flag --%s (%q)", f, l.n, cmd, name, strings.TrimSpace(l.text))
					}
				}
			}
		}
	}
	if calls < 30 {
		t.Errorf("found only %d weaver commands in the docs: the parser misses them", calls)
	}
}
