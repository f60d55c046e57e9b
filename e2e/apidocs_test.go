package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/serve"
)

// apiExample is an answer docs/api.md shows: an indented block whose
// first line is "METHOD PATH [BODY] → CODE", then the JSON answered.
type apiExample struct {
	line         int
	method, path string
	body         string
	code         int
	answer       any
	jobAPI       bool // under "## The job API"; else the status API's
}

var exampleHead = regexp.MustCompile(`^    (GET|POST|DELETE) (\S+)(?: (\{.*\}))? → (\d{3})$`)

// apiExamples reads docs/api.md's answers, in their order.
func apiExamples(t *testing.T) []apiExample {
	t.Helper()
	var out []apiExample
	lines := mdLines(readDoc(t, "docs/api.md"))
	jobs := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !l.code && strings.HasPrefix(l.text, "## ") {
			jobs = strings.HasPrefix(l.text, "## The job API")
		}
		m := exampleHead.FindStringSubmatch(l.text)
		if !l.code || m == nil {
			continue
		}
		code, _ := strconv.Atoi(m[4])
		ex := apiExample{line: l.n, method: m[1], path: m[2], body: m[3], code: code, jobAPI: jobs}
		var js strings.Builder
		for i++; i < len(lines) && strings.TrimSpace(lines[i].text) != ""; i++ {
			js.WriteString(lines[i].text)
		}
		if err := json.Unmarshal([]byte(js.String()), &ex.answer); err != nil {
			t.Fatalf("docs/api.md:%d: the answer is not JSON: %v\n%s", ex.line, err, js.String())
		}
		out = append(out, ex)
	}
	return out
}

// sameShape reports where got, an answer, lacks what want, its documented
// shape, shows: every key at its place, arrays by their first element,
// values of the same kind (null aside); at the top, also the keys got has
// that want does not show (a wrapper left out of the docs).
func sameShape(path string, want, got any, top bool) []string {
	var bad []string
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: an object documented, %T answered", path, got)}
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				bad = append(bad, fmt.Sprintf("%s.%s: documented, not answered", path, k))
				continue
			}
			bad = append(bad, sameShape(path+"."+k, wv, gv, false)...)
		}
		if top {
			for k := range g {
				if _, ok := w[k]; !ok {
					bad = append(bad, fmt.Sprintf("%s.%s: answered, not documented", path, k))
				}
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: an array documented, %T answered", path, got)}
		}
		if len(w) > 0 && len(g) > 0 {
			bad = append(bad, sameShape(path+"[0]", w[0], g[0], false)...)
		}
	case nil:
	default:
		if got != nil && fmt.Sprintf("%T", want) != fmt.Sprintf("%T", got) {
			bad = append(bad, fmt.Sprintf("%s: %T documented, %T answered", path, want, got))
		}
	}
	return bad
}

// check asks a the example's request, with words replaced as vars say,
// and compares the answer with the documented one.
func (ex apiExample) check(t *testing.T, a api, vars map[string]string) {
	t.Helper()
	path, body := ex.path, ex.body
	for k, v := range vars {
		path, body = strings.ReplaceAll(path, k, v), strings.ReplaceAll(body, k, v)
	}
	code, raw := a.do(ex.method, path, body)
	var got any
	if err := json.Unmarshal(raw, &got); err != nil || code != ex.code {
		t.Errorf("docs/api.md:%d: %s %s answered %d (documented %d): %v\n%s", ex.line, ex.method, path, code, ex.code, err, raw)
		return
	}
	for _, b := range sameShape("", ex.answer, got, true) {
		t.Errorf("docs/api.md:%d: %s %s: %s", ex.line, ex.method, ex.path, b)
	}
}

// docRows returns the endpoints of docs/api.md's tables: "GET /graph?format=json|dot" and
// the rest of their row.
func docRows(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	re := regexp.MustCompile("^\\| `((?:GET|POST|DELETE) [^`]+)` \\| (.*)\\|$")
	for _, l := range mdLines(readDoc(t, "docs/api.md")) {
		if m := re.FindStringSubmatch(l.text); m != nil && !l.code {
			out[strings.ReplaceAll(m[1], `\|`, "|")] = m[2]
		}
	}
	return out
}

// formats are the graph formats an API serves, with their content types.
var formatTypes = map[string]string{
	"json": "application/json", "graphml": "application/graphml+xml", "dot": "text/vnd.graphviz",
	"gexf": "application/gexf+xml", "html": "text/html", "sqlite": "application/vnd.sqlite3",
}

// checkGraphFormats asks every format a documented graph endpoint lists.
func checkGraphFormats(t *testing.T, a api, row, path string) {
	t.Helper()
	_, q, _ := strings.Cut(row, "?format=")
	formats := strings.Split(q, "|")
	if len(formats) < 6 {
		t.Errorf("%s lists %v: want every format weaver export writes to one file", row, formats)
	}
	for _, f := range formats {
		req, err := http.NewRequest("GET", a.base+path+"?format="+f, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, formatTypes[f]) {
			t.Errorf("%s?format=%s: %d %s, want 200 %s", path, f, resp.StatusCode, ct, formatTypes[f])
		}
	}
}

// TestDocs_APIAnswers: docs/api.md says what the status API and the job
// API answer, and they answer that: every shape it shows, through a
// running crawl and weaver serve; every graph format its tables list;
// the Prometheus names it lists.
func TestDocs_APIAnswers(t *testing.T) {
	t.Parallel()
	examples := apiExamples(t)
	rows := docRows(t)
	var status, jobs int
	for _, ex := range examples {
		if ex.jobAPI {
			jobs++
		} else {
			status++
		}
	}
	if status < 5 || jobs < 6 {
		t.Fatalf("docs/api.md shows %d answers of the status API and %d of the job API", status, jobs)
	}

	t.Run("status API", func(t *testing.T) {
		t.Parallel()
		sc := startSlowCrawl(t)
		seedHost := strings.TrimSuffix(strings.TrimPrefix(sc.w.Seed(), "http://"), "/")
		vars := map[string]string{"HOST": seedHost, "SEED": "http://" + sc.fresh + "/"}
		checkGraphFormats(t, sc.api, firstKey(rows, "GET /graph?format="), "/graph")
		_, body := sc.api.do("GET", "/metrics", "")
		for _, name := range regexp.MustCompile("`(weaver_[a-z_]+)").FindAllStringSubmatch(rows["GET /metrics"], -1) {
			if !strings.Contains(string(body), "\n"+name[1]) {
				t.Errorf("/metrics lacks %s, which docs/api.md lists", name[1])
			}
		}
		for _, path := range []string{"/", "/snapshot"} {
			if code, _ := sc.api.do("GET", path, ""); code != 200 {
				t.Errorf("GET %s: %d", path, code)
			}
		}
		for _, ex := range examples {
			if !ex.jobAPI {
				ex.check(t, sc.api, vars)
			}
		}
		if code := sc.p.wait(t); code != 0 {
			t.Errorf("crawl: exit %d after POST /stop", code)
		}
	})

	t.Run("job API", func(t *testing.T) {
		t.Parallel()
		w := fakeweb.New(fakeweb.Config{Hosts: 40, Seed: 9, RobotsDisallowEvery: -1})
		srv := startWeb(t, w)
		dir := t.TempDir()
		p := start(t, dir, "serve", "--listen", "127.0.0.1:0", "--dir", filepath.Join(dir, "jobs"), "--connect-to", srv.ConnectTo())
		a := jobAPI(t, p)
		var created serve.CreatedAnswer
		a.json("POST", "/crawl", fmt.Sprintf(`{"url": %q, "max_pages": 5, "politeness_delay_ms": 0}`, w.Seed()), http.StatusCreated, &created)
		p.poll(t, "the job to complete", func() bool {
			var j serve.JobAnswer
			a.json("GET", "/crawl/"+created.JobID+"?graph=false", "", http.StatusOK, &j)
			return j.Job.Status == serve.JobCompleted
		})
		vars := map[string]string{"{id}": created.JobID, "SEED": w.Seed()}
		for row := range rows {
			if strings.HasPrefix(row, "GET /crawl/{id}/graph?format=") {
				checkGraphFormats(t, a, row, "/crawl/"+created.JobID+"/graph")
			}
		}
		for _, path := range []string{"/", "/crawl/" + created.JobID + "/map"} {
			if code, _ := a.do("GET", path, ""); code != 200 {
				t.Errorf("GET %s: %d", path, code)
			}
		}
		for _, ex := range examples {
			if ex.jobAPI {
				ex.check(t, a, vars)
			}
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		if code := p.wait(t); code != 0 {
			t.Errorf("serve: exit %d", code)
		}
	})
}

// firstKey returns the key of m that starts with prefix.
func firstKey(m map[string]string, prefix string) string {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return k
		}
	}
	return ""
}
