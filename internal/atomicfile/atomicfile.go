// Package atomicfile holds what the packages that replace a file atomically
// (a temporary file in the same directory, renamed over the target) share:
// finding the file a name's symbolic links lead to, so that the rename
// replaces that file and not the link, and creating the temporary file
// under a name of bounded length.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// CreateTemp creates a new file in dir with mode perm (less the umask),
// for writing before it is renamed over its target. Its name, ".cachekit-"
// and a random suffix, has a bounded length: one built from the target's
// name would make a valid name of 240 bytes or more too long.
func CreateTemp(dir string, perm fs.FileMode) (*os.File, error) {
	for range 10000 {
		name := filepath.Join(dir, ".cachekit-"+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("%s: no free name for a temporary file", dir)
}

// maxLinks bounds the links Resolve follows by hand, as the kernel bounds
// a path's (ELOOP).
const maxLinks = 40

// Resolve returns the file that name's symbolic links lead to, or name if
// it has none, or if they lead to something name itself opens (a link into
// /proc/self/fd to a pipe). A dangling link leads to the file it names,
// which does not exist yet: written through, the link is kept, as a shell's
// redirection keeps it. A dangling link that leads nowhere a file can be
// created (into a missing directory, or round a loop) is an error, as the
// kernel's open reports it: writing over the link itself would lose it.
//
// A name that is not a link keeps its last element, but a ".." in its
// directory part is resolved as the kernel does (after a link to a
// directory, ".." leaves the link's target, not the link's directory), so
// that the temporary file is made in the directory the name reaches.
func Resolve(name string) (string, error) {
	if st, err := os.Lstat(name); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		return resolveDir(name), nil
	}
	if target, err := filepath.EvalSymlinks(name); err == nil {
		return target, nil
	}
	if _, err := os.Stat(name); err == nil {
		return name, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: %w", name, err) // a loop, say
	}
	p := name
	for range maxLinks {
		// The directory the kernel reaches, links and all: EvalSymlinks
		// resolves a ".." after a link as the kernel does, where
		// cleaning the path as text first would not.
		dirPart, base := splitLast(p)
		dir, err := filepath.EvalSymlinks(dirPart)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		p = dir + string(filepath.Separator) + base
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil // the end of the chain, in a directory that exists
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		if !filepath.IsAbs(target) {
			target = dir + string(filepath.Separator) + target // not cleaned: see above
		}
		p = target
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", name)
}

// resolveDir returns name with its directory part resolved by
// EvalSymlinks if that part holds a ".." element (which filepath.Dir would
// clean as text); otherwise, or if the directory cannot be resolved (it is
// missing: the write then fails on it), name.
func resolveDir(name string) string {
	dirPart, base := splitLast(name)
	if !slices.Contains(strings.Split(dirPart, string(filepath.Separator)), "..") {
		return name
	}
	dir, err := filepath.EvalSymlinks(dirPart)
	if err != nil {
		return name
	}
	return dir + string(filepath.Separator) + base
}

// splitLast splits p at its last separator, without cleaning either part:
// the directory part ("." if there is none) and the last element.
func splitLast(p string) (dir, base string) {
	i := strings.LastIndexByte(p, filepath.Separator)
	switch {
	case i < 0:
		return ".", p
	case i == 0:
		return string(filepath.Separator), p[1:]
	}
	return p[:i], p[i+1:]
}

// WriteFile writes data to a temporary file next to name and renames
// it to name, so that a failed write (a full disk) leaves neither a
// truncated file nor a destroyed previous one. Through a symbolic link it
// replaces the file the link points to, not the link, and keeps the
// permissions of a file it replaces. A name that is neither a regular file
// nor missing (a device or a pipe: /dev/stdout, /dev/null) has nothing to
// replace: data is written to it as it is.
func WriteFile(name string, data []byte) error {
	name, err := Resolve(name)
	if err != nil {
		return err
	}
	perm, replacing := fs.FileMode(0), false
	if st, err := os.Stat(name); err == nil {
		if !st.Mode().IsRegular() {
			if st.IsDir() {
				return fmt.Errorf("%s is a directory", name)
			}
			f, err := os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0)
			if err == nil {
				_, err = f.Write(data)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		}
		perm, replacing = st.Mode().Perm(), true // kept
	}
	tmp, err := CreateTemp(filepath.Dir(name), 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	_, err = tmp.Write(data)
	if err == nil && replacing {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// CheckWritable reports why WriteFile could not write name, if it
// can tell now: name is a directory, or no file can be created beside it
// (a device or a pipe, which WriteFile writes as it is, is not
// checked).
func CheckWritable(name string) error {
	name, err := Resolve(name)
	if err != nil {
		return err
	}
	if st, err := os.Stat(name); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory", name)
	} else if err == nil && !st.Mode().IsRegular() {
		return nil
	}
	f, err := CreateTemp(filepath.Dir(name), 0o644)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // not the temporary file's name
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	f.Close()
	return os.Remove(f.Name())
}
