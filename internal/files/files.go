// Package files keeps uploaded files under the data directory. A file is
// streamed into a temporary file in its final directory while each line is
// checked, and renamed into place only when the whole upload passed: a stored
// file is complete or absent, and nothing is left of a rejected upload. Memory
// stays bounded by the longest line, whatever the file's size.
package files

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Dir is the data directory; paths given to it are relative and slash-separated
// ("sessions/<id>/input_events.jsonl").
type Dir struct {
	root string
}

// New returns the data directory at root (created on first write).
func New(root string) *Dir { return &Dir{root: root} }

// Root is the directory's path.
func (d *Dir) Root() string { return d.root }

func (d *Dir) path(rel string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(rel))
	if filepath.IsAbs(clean) || clean == "." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) || clean == ".." {
		return "", fmt.Errorf("storage: path %q leaves the data directory", rel)
	}
	return filepath.Join(d.root, clean), nil
}

// Errors of Stage that describe the upload, not the server.
var (
	// ErrTooLarge: the upload is longer than Limits.MaxBytes.
	ErrTooLarge = errors.New("storage: upload too large")
	// ErrLineTooLong: a line is longer than Limits.MaxLine.
	ErrLineTooLong = errors.New("storage: line too long")
	// ErrEmpty: the upload has no lines.
	ErrEmpty = errors.New("storage: upload is empty")
)

// LineError is a line the check refused; Line counts from 1.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Limits bound an upload.
type Limits struct {
	MaxBytes int64 // the whole file
	MaxLine  int   // one line, without its newline
}

// Stats describe a staged file.
type Stats struct {
	Bytes int64 // as stored
	Lines int
}

// Staged is an upload written to a temporary file beside its destination; it
// becomes the file at its path with Commit, or disappears with Discard.
type Staged struct {
	Stats
	tmp, dest  string
	createdDir string // the directory Stage made, removed again by Discard if empty
	done       bool
}

// Stage streams r into a temporary file in the directory of rel, calling check
// on every line (numbered from 1, without its line ending). Lines are stored
// with "\n" endings (a "\r\n" loses its "\r"; a missing final newline is
// added), so the stored file is clean JSONL. A check error or a limit stops the
// upload: the temporary file is removed and the error returned (a *LineError
// for check errors and over-long lines). The caller must Commit or Discard a
// successful result.
func (d *Dir) Stage(rel string, r io.Reader, lim Limits, check func(n int, line []byte) error) (_ *Staged, err error) {
	dest, err := d.path(rel)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(dest)
	created, err := mkdirAll(dir)
	if err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".upload-*")
	if err != nil {
		if created != "" {
			_ = os.Remove(dir)
		}
		return nil, fmt.Errorf("storage: %w", err)
	}
	s := &Staged{tmp: f.Name(), dest: dest, createdDir: created}
	defer func() {
		if err != nil {
			_ = f.Close()
			s.Discard()
		}
	}()
	w := bufio.NewWriterSize(f, 64<<10)
	if err := copyLines(w, io.LimitReader(r, lim.MaxBytes+1), lim, check, &s.Stats); err != nil {
		return nil, err
	}
	if s.Lines == 0 {
		return nil, ErrEmpty
	}
	if err := w.Flush(); err != nil {
		return nil, fmt.Errorf("storage: write: %w", err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("storage: sync: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("storage: close: %w", err)
	}
	return s, nil
}

// copyLines copies r to w line by line, checking each. Bytes read count
// against MaxBytes (r reads at most one byte more, to tell). Blank lines at the
// end of the file are dropped; a blank line followed by more lines is given to
// check like any other (which refuses it).
func copyLines(w *bufio.Writer, r io.Reader, lim Limits, check func(int, []byte) error, st *Stats) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		read   int64
		n      int    // lines seen
		blanks []int  // blank lines not yet followed by a record
		line   []byte // reused across lines: one line is in memory at a time
	)
	emit := func(num int, body []byte) error {
		if err := check(num, body); err != nil {
			return &LineError{Line: num, Err: err}
		}
		if _, err := w.Write(body); err != nil {
			return fmt.Errorf("storage: write: %w", err)
		}
		if err := w.WriteByte('\n'); err != nil {
			return fmt.Errorf("storage: write: %w", err)
		}
		st.Lines++
		st.Bytes += int64(len(body)) + 1
		return nil
	}
	for {
		chunk, err := br.ReadSlice('\n')
		read += int64(len(chunk))
		if read > lim.MaxBytes {
			return ErrTooLarge
		}
		line = append(line, chunk...)
		if len(line) > lim.MaxLine+2 { // room for "\r\n"
			return &LineError{Line: n + 1, Err: fmt.Errorf("%w (limit %d bytes)", ErrLineTooLong, lim.MaxLine)}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // the line goes on
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("storage: read upload: %w", err)
		}
		if len(line) > 0 {
			n++
			body := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
			if len(body) > lim.MaxLine {
				return &LineError{Line: n, Err: fmt.Errorf("%w (limit %d bytes)", ErrLineTooLong, lim.MaxLine)}
			}
			if len(bytes.TrimSpace(body)) == 0 {
				blanks = append(blanks, n)
			} else {
				for _, b := range blanks {
					if err := emit(b, nil); err != nil {
						return err
					}
				}
				blanks = blanks[:0]
				if err := emit(n, body); err != nil {
					return err
				}
			}
			line = line[:0]
		}
		if err == io.EOF {
			return nil
		}
	}
}

// Commit renames the staged file to its destination, replacing any file there.
func (s *Staged) Commit() error {
	if s.done {
		return errors.New("storage: staged file already committed or discarded")
	}
	if err := os.Rename(s.tmp, s.dest); err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	s.done = true
	if dir, err := os.Open(filepath.Dir(s.dest)); err == nil {
		_ = dir.Sync() // make the rename durable where the platform allows
		_ = dir.Close()
	}
	return nil
}

// Discard removes the staged file (and the directory Stage created, if empty).
// It is safe to call after Commit, when it does nothing.
func (s *Staged) Discard() {
	if s == nil || s.done {
		return
	}
	s.done = true
	_ = os.Remove(s.tmp)
	if s.createdDir != "" {
		for dir := filepath.Dir(s.tmp); ; dir = filepath.Dir(dir) {
			if os.Remove(dir) != nil || dir == s.createdDir {
				break
			}
		}
	}
}

// Open opens a stored file.
func (d *Dir) Open(rel string) (*os.File, error) {
	p, err := d.path(rel)
	if err != nil {
		return nil, err
	}
	return os.Open(p)
}

// Remove deletes a stored file and its directory when that is left empty. A
// missing file is not an error.
func (d *Dir) Remove(rel string) error {
	p, err := d.path(rel)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("storage: %w", err)
	}
	removeEmpty(filepath.Dir(p), d.root)
	return nil
}

// mkdirAll creates dir and returns the topmost directory it had to create
// ("" when dir existed).
func mkdirAll(dir string) (string, error) {
	top := ""
	for p := dir; ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		top = p
		if filepath.Dir(p) == p {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return top, nil
}

// removeEmpty removes dir if it is empty (os.Remove refuses a non-empty one)
// and lies strictly inside stop.
func removeEmpty(dir, stop string) {
	rel, err := filepath.Rel(stop, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return
	}
	_ = os.Remove(dir)
}
