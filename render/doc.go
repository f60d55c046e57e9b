// Package render runs pages through a real browser, so that weaver sees the
// links of pages whose HTML is a JavaScript shell that builds its links in
// the browser.
//
// A Pool drives one headless chromium (Debian's chromium or Chrome, found by
// FindBrowser) over the DevTools protocol with chromedp, and renders at most
// Config.Tabs pages at once, each in a tab of its own fresh browser context
// (no cookie or storage crosses from one render to the next).
//
// # Every request goes through weaver
//
// The browser never reaches the network itself. Every request a tab makes is
// paused with the DevTools Fetch domain (Fetch.enable with the pattern "*")
// and either refused (Fetch.failRequest) or fetched by the pool with the
// caller's Config.Transport, after the caller's Config.Policy has seen it,
// and handed back to the browser (Fetch.fulfillRequest). So --connect-to,
// the proxy variables, the private-address refusal after DNS, robots.txt and
// the User-Agent apply to the browser exactly as to a fetch; both http and
// https pages work, since weaver does the TLS.
//
// What is loaded:
//
//   - the page itself (the main frame's document, with at most 5 redirects);
//   - scripts (type Script) from the page's registrable domain and from the
//     hosts that the page's own HTML names in <script src>;
//   - XHR and fetch() calls to the page's registrable domain;
//   - GET and HEAD only, and the CORS preflights (OPTIONS with
//     Access-Control-Request-Method) of those calls.
//
// Everything else is refused before it leaves the browser: images, media,
// fonts, style sheets, frames, web sockets, beacons, prefetches, other
// documents (a script that navigates away or opens a window stays on the page),
// third-party XHR, and more than MaxRequests requests per page. Each refusal
// is listed in Result.Fetches with its reason.
//
// # The fence
//
// Whatever escapes interception (chromium's own background traffic:
// component updates, time sync, safe browsing; a popup's requests) meets two
// fences. The browser is started with --proxy-server pointing at a listener of
// the pool on 127.0.0.1 that answers every request 403 and forwards nothing
// (with --proxy-bypass-list=<-loopback>, so loopback goes there too), and with
// --host-resolver-rules "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", so the browser
// resolves no name. Pool.Escaped lists what reached the fence.
//
// # Hostile pages
//
// A render has a deadline (Config.Timeout). A script that never ends, an
// alert(), a DOM that grows without end or a navigation away costs at most
// that deadline and that tab: alert, confirm, prompt and print are replaced
// by no-ops and any dialog is dismissed, navigations and popups are refused,
// the outerHTML is capped at Config.MaxBodyBytes. When the browser dies (a
// crash, the kernel's OOM killer, a SIGKILL), the renders in flight return
// ErrBrowserLost, which the caller retries, and the next Render starts a new
// browser; the browser is also replaced, between renders, when its processes
// use more than Config.MaxRSS or after Config.MaxRenders pages.
//
// # When to render
//
// LooksLikeShell is the rule of `--render auto`: a page with no <a href> or
// <area href> and a script, or with an empty mount element (id app, root or
// __next).
package render
