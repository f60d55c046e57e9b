package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Kind is what an output name refers to.
type Kind int

// The kinds of output targets.
const (
	// Missing: nothing by that name yet; the output creates it.
	Missing Kind = iota
	// Regular: an existing regular file, replaced by a rename.
	Regular
	// Special: a device, FIFO, socket or open descriptor, written in place.
	Special
)

// Target is an output name resolved.
type Target struct {
	// Name is the name as given, for messages.
	Name string
	// Path is the file a rename replaces (Missing, Regular): Name with
	// every symbolic link followed. For Special it is Name.
	Path string
	// Kind says how the output is written.
	Kind Kind
	// Info describes the existing file; nil when Missing.
	Info fs.FileInfo
}

// Exists reports whether t names an existing regular file, which an
// output would destroy: the one a command asks --force for. A device or a
// descriptor is not a file to protect.
func (t Target) Exists() bool { return t.Kind == Regular }

// maxLinks bounds the symbolic links followed, as the kernel's ELOOP does.
const maxLinks = 40

// Resolve tells what name refers to. It returns an error wrapping ErrIsDir
// for a directory, and file system errors (a missing directory on the
// way, too many links).
func Resolve(name string) (Target, error) {
	t := Target{Name: name, Path: name}
	if name == "" {
		return t, errors.New("empty file name")
	}
	path := name
	for hops := 0; ; hops++ {
		if hops > maxLinks {
			return t, fmt.Errorf("%s: too many levels of symbolic links", name)
		}
		dir, base := filepath.Split(path)
		if dir == "" {
			dir = "."
		}
		real, err := filepath.EvalSymlinks(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return t, noDir{name, filepath.Clean(dir)}
		}
		if err != nil {
			return t, err
		}
		if real == "/proc" || strings.HasPrefix(real, "/proc/") {
			// An open descriptor (/dev/stdout is /proc/self/fd/1): its
			// link text ("pipe:[123]", a deleted file) is no file name;
			// the kernel reaches it by the name given.
			return special(t)
		}
		path = filepath.Join(real, base)
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			t.Path, t.Kind = path, Missing
			return t, nil
		}
		if err != nil {
			return t, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			t.Path, t.Info = path, fi
			switch {
			case fi.IsDir():
				return t, fmt.Errorf("%s %w", name, ErrIsDir)
			case fi.Mode().IsRegular():
				t.Kind = Regular
			default:
				t.Kind, t.Path = Special, name
			}
			return t, nil
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return t, err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(real, dest)
		}
		path = dest
	}
}

// special fills t for a name reached through /proc.
func special(t Target) (Target, error) {
	fi, err := os.Stat(t.Name)
	if err != nil {
		return t, err
	}
	if fi.IsDir() {
		return t, fmt.Errorf("%s %w", t.Name, ErrIsDir)
	}
	t.Kind, t.Path, t.Info = Special, t.Name, fi
	return t, nil
}

// Write writes the output name with fill, following the package's rules
// (see Resolve): in place for a Special target, else through a temporary
// file renamed over t.Path. perm is a new file's mode (before the umask);
// a replaced file's mode, and as root its owner, carry over. It returns
// Resolve's errors, fill's, and file system errors; on any error a
// replaced file is left as it was and no temporary file remains.
func Write(name string, perm fs.FileMode, fill func(w io.Writer) error) error {
	t, err := Resolve(name)
	if err != nil {
		return err
	}
	return t.Write(perm, fill)
}

// Write is the package's Write on a target already resolved (so that a
// caller can check it first).
func (t Target) Write(perm fs.FileMode, fill func(w io.Writer) error) (err error) {
	if t.Kind == Special {
		return t.writeInPlace(fill)
	}
	tmp, err := t.createTemp(perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // nothing to remove once renamed
	defer func() { err = hide(err, tmp.Name(), t) }()
	err = fill(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return t.install(tmp.Name())
}

// Build writes the output name through build, for files that a library
// creates by name (a bbolt store, a SQLite database): build must create
// the file tmp, which does not exist when it is called. A Regular or
// Missing target is then installed by a rename; for a Special target tmp
// is made in the temporary directory ($TMPDIR) and copied into the target
// in place. It returns Resolve's errors, build's, and file system errors;
// on any error no temporary file remains.
func Build(name string, build func(tmp string) error) error {
	t, err := Resolve(name)
	if err != nil {
		return err
	}
	return t.Build(build)
}

// Build is the package's Build on a target already resolved.
func (t Target) Build(build func(tmp string) error) (err error) {
	tmp, err := t.TempName()
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	defer func() { err = hide(err, tmp, t) }()
	if err := build(tmp); err != nil {
		return err
	}
	return t.Install(tmp)
}

// TempName returns an unused name for the file that will become t, for
// callers that build it by name themselves and then Install it: beside
// t.Path, or for a Special target in the temporary directory ($TMPDIR).
// Nothing exists by that name when TempName returns.
func (t Target) TempName() (string, error) {
	dir := filepath.Dir(t.Path)
	if t.Kind == Special {
		dir = os.TempDir()
	}
	return tempName(dir, filepath.Base(t.Path))
}

// Install puts the finished file tmp (from TempName) in t's place: synced
// and renamed over t.Path with the replaced file's mode (and as root its
// owner), or for a Special target copied into it in place and removed. It
// returns file system errors, naming t rather than tmp.
func (t Target) Install(tmp string) (err error) {
	defer func() { err = hide(err, tmp, t) }()
	if t.Kind == Special {
		defer os.Remove(tmp)
		return t.writeInPlace(func(w io.Writer) error {
			f, err := os.Open(tmp)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(w, f)
			return err
		})
	}
	f, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if err == nil && t.Info != nil {
		carryOver(f, t.Info)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return t.install(tmp)
}

// writeInPlace opens a Special target for writing, appending (a descriptor
// that is a regular file, `>> log`, is not truncated or overwritten),
// never creating, truncating or chmod'ing it.
func (t Target) writeInPlace(fill func(w io.Writer) error) error {
	f, err := os.OpenFile(t.Name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	err = fill(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// createTemp creates a new file beside t.Path with a hidden, random name.
func (t Target) createTemp(perm fs.FileMode) (*os.File, error) {
	if perm == 0 {
		perm = 0o644
	}
	dir, base := filepath.Split(t.Path)
	for range 100 {
		name, err := randomName(dir, base)
		if err != nil {
			return nil, err
		}
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if t.Info != nil {
			carryOver(f, t.Info)
		}
		return f, nil
	}
	return nil, fmt.Errorf("%s: no free temporary name", t.Name)
}

// carryOver gives the new file f the mode of the file it replaces, and as
// root its owner, as an editor saving a file does. Failing that is not an
// error: the output is still right.
func carryOver(f *os.File, old fs.FileInfo) {
	_ = f.Chmod(old.Mode().Perm())
	chown(f, old)
}

// tempName returns an unused hidden name in dir for a file being built;
// nothing exists by that name when it returns.
func tempName(dir, base string) (string, error) {
	for range 100 {
		name, err := randomName(dir, base)
		if err != nil {
			return "", err
		}
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			return name, nil
		}
	}
	return "", fmt.Errorf("%s: no free temporary name", filepath.Join(dir, base))
}

func randomName(dir, base string) (string, error) {
	var r [6]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	return filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(r[:])), nil
}

// install renames the finished, synced file tmp over t.Path and syncs the
// directory, so that after a crash t.Path is the old file or the new one.
// A t.Path that became anything but a regular file meanwhile is left
// alone (ErrChanged).
func (t Target) install(tmp string) error {
	if fi, err := os.Lstat(t.Path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s %w", t.Name, ErrChanged)
	}
	if err := os.Rename(tmp, t.Path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(t.Path)); err == nil {
		// Some file systems cannot sync a directory (nor need to); the
		// rename itself has succeeded.
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// tempPattern matches the temporary names randomName makes.
var tempPattern = regexp.MustCompile(`(^|[/\s"'])\.([^/\s"']+?)\.tmp-[0-9a-f]{12}`)

// Untemp rewrites, in a message, each temporary file name this package
// made into the name of the output it stands for (".x.bolt.tmp-0a1b2c3d4e5f"
// becomes "x.bolt"), for errors that name the file a library was building
// (a store being verified) rather than the output the user asked for.
func Untemp(msg string) string {
	return tempPattern.ReplaceAllString(msg, "$1$2")
}

// hide replaces the temporary file's name by the output's in err's
// message: the user named the output, never saw the temporary file, and
// finds none left behind. errors.Is and errors.As still see err.
func hide(err error, tmp string, t Target) error {
	if err == nil || !strings.Contains(err.Error(), tmp) {
		return err
	}
	return hidden{err, tmp, t}
}

type hidden struct {
	err error
	tmp string
	t   Target
}

func (h hidden) Error() string {
	msg := h.err.Error()
	// "rename TMP PATH: …" would name the output twice.
	msg = strings.ReplaceAll(msg, h.tmp+" "+h.t.Path, h.t.Name)
	return strings.ReplaceAll(msg, h.tmp, h.t.Name)
}

func (h hidden) Unwrap() error { return h.err }

// SameFile reports whether a and b name the same file: the same path, or
// one file found at both (a hard link, a symbolic link, another spelling).
func SameFile(a, b string) bool {
	if a == b {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
