package render

import (
	"fmt"
	"os/exec"
)

// browserNames are the programs FindBrowser looks for on PATH, in order.
var browserNames = []string{"chromium", "google-chrome", "google-chrome-stable", "chromium-browser"}

// FindBrowser returns the browser to run: flagValue (the --browser flag) if
// not empty, else getenv("WEAVER_BROWSER") if not empty, else the first of
// chromium, google-chrome, google-chrome-stable and chromium-browser on PATH.
// A name without a slash is looked up on PATH. It returns an error wrapping
// ErrNoBrowser, whose message names --browser, when there is none.
func FindBrowser(flagValue string, getenv func(string) string) (string, error) {
	if flagValue != "" {
		p, err := exec.LookPath(flagValue)
		if err != nil {
			return "", fmt.Errorf("%w: --browser %q: %w", ErrNoBrowser, flagValue, err)
		}
		return p, nil
	}
	if getenv != nil {
		if v := getenv("WEAVER_BROWSER"); v != "" {
			p, err := exec.LookPath(v)
			if err != nil {
				return "", fmt.Errorf("%w: WEAVER_BROWSER %q (or give --browser PATH): %w", ErrNoBrowser, v, err)
			}
			return p, nil
		}
	}
	for _, name := range browserNames {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: no chromium or google-chrome on PATH: install chromium or give its path with --browser PATH (or WEAVER_BROWSER)", ErrNoBrowser)
}
