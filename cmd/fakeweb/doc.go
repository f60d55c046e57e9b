// Command fakeweb serves the fake internet of package fakeweb on one port:
// thousands of virtual hosts, chosen by the Host header, for trying and
// benchmarking weaver without touching the real web.
package main
