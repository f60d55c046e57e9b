package render

import "errors"

// Errors returned by the package. They are wrapped; test them with errors.Is.
var (
	// ErrNoBrowser means FindBrowser found no chromium or Chrome.
	ErrNoBrowser = errors.New("render: no browser")

	// ErrConfig means New was given an unusable Config.
	ErrConfig = errors.New("render: bad config")

	// ErrClosed means the Pool was closed.
	ErrClosed = errors.New("render: pool closed")

	// ErrStart means the browser could not be started.
	ErrStart = errors.New("render: browser did not start")

	// ErrBrowserLost means the browser died or was replaced while the page
	// was rendered. Nothing was learned about the page: render it again.
	ErrBrowserLost = errors.New("render: browser lost")

	// ErrTimeout means the page did not render within Config.Timeout.
	ErrTimeout = errors.New("render: timeout")

	// ErrRefused means the page itself (the main document) was refused by the
	// policy or the pool's rules; the wrapped error says why.
	ErrRefused = errors.New("render: page refused")

	// ErrFetch means the page itself could not be fetched; the wrapped error
	// is the transport's.
	ErrFetch = errors.New("render: page fetch failed")
)
