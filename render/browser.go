package render

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// browser is one chromium process and its DevTools connection.
type browser struct {
	// ctx is chromedp's handle on the browser, not a request scope: tabs
	// are opened from it, and chromedp cancels it when the browser dies.
	ctx         context.Context
	cancel      context.CancelFunc // closes the connection
	allocCancel context.CancelFunc // kills the process and removes its profile

	// Guarded by Pool.mu.
	refs     int  // renders in flight
	renders  int  // renders done
	timeouts int  // renders in a row that timed out
	retiring bool // takes no new render; closed when refs is 0
}

// flags are chromium's switches besides chromedp's defaults. The proxy and
// the resolver rules are the fence for whatever escapes the Fetch
// interception; the rest turn off what a crawler's browser has no use for.
func flags(cfg *Config, fenceAddr string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(cfg.Browser),
		chromedp.UserAgent(cfg.UserAgent),
		chromedp.Flag("proxy-server", "http://"+fenceAddr),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,OptimizationHints,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication,CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions,NetworkTimeServiceQuerying,SafeBrowsing,PrivacySandboxSettings4,HttpsUpgrades"),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("disable-notifications", true),
		chromedp.Flag("deny-permission-prompts", true),
		chromedp.Flag("disable-popup-blocking", false),
		chromedp.Flag("block-new-web-contents", true),
		chromedp.Flag("blink-settings", "imagesEnabled=false"),
		chromedp.Flag("js-flags", "--max-old-space-size=512"),
		chromedp.Flag("no-sandbox", os.Geteuid() == 0),
		chromedp.WindowSize(1280, 1024),
	}
}

// startBrowser starts chromium and connects to it, within
// cfg.StartTimeout or ctx.
func startBrowser(ctx context.Context, cfg *Config, fenceAddr string) (*browser, error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], flags(cfg, fenceAddr)...)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithErrorf(chromedpErrorf))
	b := &browser{ctx: bctx, cancel: bcancel, allocCancel: acancel}

	// The first Do starts the browser and binds it to its context, so it
	// gets none with a deadline: a watchdog stops a start that hangs.
	timer := time.AfterFunc(cfg.StartTimeout, bcancel)
	stop := context.AfterFunc(ctx, bcancel)
	err := chromedp.Do(bctx)
	timer.Stop()
	stopped := !stop()
	if err == nil && !stopped && bctx.Err() == nil {
		return b, nil
	}
	b.close()
	if stopped && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err == nil {
		err = context.DeadlineExceeded
	}
	return nil, fmt.Errorf("%w: %s: %w", ErrStart, cfg.Browser, err)
}

// dead reports whether the browser's connection is gone (it exited, was
// killed, or was closed).
func (b *browser) dead() bool { return b.ctx.Err() != nil }

func (b *browser) pid() int {
	if c := chromedp.FromContext(b.ctx); c != nil && c.Browser != nil && c.Browser.Process() != nil {
		return c.Browser.Process().Pid
	}
	return 0
}

// close stops the browser and waits for its process.
func (b *browser) close() {
	b.cancel()
	b.allocCancel()
}

// rss returns the memory of the browser's process tree in bytes: the sum of
// their proportional set sizes (a shared page counts once, split between
// its processes), or of their resident sets where /proc has no
// smaps_rollup.
func (b *browser) rss() int64 {
	root := b.pid()
	if root == 0 {
		return 0
	}
	var total int64
	for _, pid := range descendants(root) {
		total += memoryOf(pid)
	}
	return total
}

// memoryOf returns the PSS of a process, else its RSS, in bytes.
func memoryOf(pid int) int64 {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	if data, err := os.ReadFile(filepath.Join(dir, "smaps_rollup")); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				return kb << 10
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "statm"))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// descendants returns root and every process below it, from /proc.
func descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return []int{root}
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name, in parentheses, may hold spaces: the fields
		// that matter come after its closing parenthesis.
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], pid)
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}
