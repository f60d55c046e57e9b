package graph

// NormalizeHost returns the canonical form of a URL host (with or without
// port) for the given scheme. A helper is filling this in.
func NormalizeHost(hostport, scheme string) (string, error) { panic("todo") }

// RegistrableDomain returns host's eTLD+1 per the public suffix list.
func RegistrableDomain(host string) string { panic("todo") }
