package crawl

import (
	"net/http"
	"net/url"
)

// NewTransport returns the transport a crawl with cfg fetches with: its
// --connect-to rules (cfg.ConnectTo), then proxy (nil: none; the crawl
// passes http.ProxyFromEnvironment's choice), then a direct connection
// refused with ErrRefusedAddress when the address, after DNS, is loopback,
// private, link-local or multicast, unless cfg.AllowPrivateNetworks. It
// follows no redirect. render.Pool fetches the browser's requests with it.
// It returns an error for a --connect-to rule that does not parse.
func NewTransport(cfg *Config, proxy func(*url.URL) (*url.URL, error)) (http.RoundTripper, error) {
	c, err := newClient(cfg, proxy)
	if err != nil {
		return nil, err
	}
	return c.Transport, nil
}
