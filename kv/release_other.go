//go:build !linux

package kv

// ReleasePages does nothing on this system.
func (tx *Tx) ReleasePages() {}
