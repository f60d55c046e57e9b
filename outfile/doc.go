// Package outfile writes the files weaver's commands produce (metrics,
// exports, snapshots, merged and repaired stores) without ever destroying
// what the name pointed at.
//
// A regular file, or a name that does not exist yet, is written under a
// temporary name in the same directory, synced and renamed into place, so
// a reader sees the old file or the whole new one. A character device, a
// FIFO or a socket (/dev/null, a named pipe, a terminal) is written in
// place: never replaced, never chmod'ed. So is a name that reaches an open
// descriptor through /proc (/dev/stdout, /dev/fd/3), whatever that
// descriptor is: the output goes where the caller's descriptor goes. A
// directory is refused. A symbolic link is never replaced: the rules apply
// to the file it points at, which a rename replaces while the link keeps
// pointing at it.
package outfile
