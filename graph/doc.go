// Package graph holds weaver's domain types: a Node per normalised host, an
// Edge per host→host link, and the host rules that decide when two URLs
// belong to the same node.
//
// A host is the node's identity, so it is always written one way:
// NormalizeHost lowercases it, converts international names to ASCII with
// IDNA, drops the root dot and the scheme's default port, and writes IP
// literals canonically (127.0.0.1, [2001:db8::1]); HostOf does the same for
// a parsed URL and refuses anything but http and https. RegistrableDomain
// groups hosts under their registrable domain (eTLD+1) for the Node.Domain
// field and per-domain limits.
//
// graph sits above kv in weaver's layering and knows nothing of the
// frontier.
package graph
