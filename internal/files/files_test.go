package files_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/files"
)

var lim = files.Limits{MaxBytes: 1 << 20, MaxLine: 64}

func nonEmpty(_ int, line []byte) error {
	if len(strings.TrimSpace(string(line))) == 0 {
		return errors.New("empty")
	}
	if strings.Contains(string(line), "bad") {
		return errors.New("bad line")
	}
	return nil
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

func TestStageCommit(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	d := files.New(root)
	s, err := d.Stage("a/b/f.jsonl", strings.NewReader("one\r\ntwo\nthree\n\n  \n"), lim, nonEmpty)
	require.NoError(t, err)
	require.Equal(t, 3, s.Lines, "trailing blank lines are not records")
	require.Equal(t, int64(len("one\ntwo\nthree\n")), s.Bytes)
	require.NoFileExists(t, filepath.Join(root, "a/b/f.jsonl"), "not in place before Commit")
	require.NoError(t, s.Commit())
	s.Discard() // no effect after Commit
	got, err := os.ReadFile(filepath.Join(root, "a/b/f.jsonl"))
	require.NoError(t, err)
	require.Equal(t, "one\ntwo\nthree\n", string(got))
	require.Equal(t, []string{"a", "a/b", "a/b/f.jsonl"}, entries(t, root))

	// A second upload replaces the file; one without a final newline gets one.
	s, err = d.Stage("a/b/f.jsonl", strings.NewReader("four"), lim, nonEmpty)
	require.NoError(t, err)
	require.NoError(t, s.Commit())
	got, _ = os.ReadFile(filepath.Join(root, "a/b/f.jsonl"))
	require.Equal(t, "four\n", string(got))

	require.NoError(t, d.Remove("a/b/f.jsonl"))
	require.Equal(t, []string{"a"}, entries(t, root), "the file's directory goes with it when empty")
	require.NoError(t, d.Remove("a/b/f.jsonl"), "removing a missing file is fine")
}

func TestStageRefusals(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	d := files.New(root)
	for _, tc := range []struct {
		name, content string
		lim           files.Limits
		line          int
		is            error
	}{
		{"bad line 3", "ok\nok\nbad\nok\n", lim, 3, nil},
		{"blank line followed by more", "ok\n\nok\n", lim, 2, nil},
		{"line too long", "ok\n" + strings.Repeat("x", 65) + "\n", lim, 2, files.ErrLineTooLong},
		{"line too long across buffer fills", strings.Repeat("y", 200<<10), files.Limits{MaxBytes: 1 << 20, MaxLine: 100 << 10}, 1, files.ErrLineTooLong},
		{"too large", strings.Repeat("ok\n", 100), files.Limits{MaxBytes: 100, MaxLine: 64}, 0, files.ErrTooLarge},
		{"empty", "", lim, 0, files.ErrEmpty},
		{"only blank lines", "\n\n", lim, 0, files.ErrEmpty},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := d.Stage("sessions/x/input_events.jsonl", strings.NewReader(tc.content), tc.lim, nonEmpty)
			require.Error(t, err)
			require.Nil(t, s)
			if tc.line > 0 {
				var le *files.LineError
				require.ErrorAs(t, err, &le)
				require.Equal(t, tc.line, le.Line)
			}
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
			require.Empty(t, entries(t, root), "nothing is left of a refused upload")
		})
	}
	// Directories that existed before stay.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sessions"), 0o755))
	_, err := d.Stage("sessions/y/input_events.jsonl", strings.NewReader("bad\n"), lim, nonEmpty)
	require.Error(t, err)
	require.Equal(t, []string{"sessions"}, entries(t, root))
	s, err := d.Stage("sessions/y/input_events.jsonl", strings.NewReader("ok\n"), lim, nonEmpty)
	require.NoError(t, err)
	s.Discard()
	require.Equal(t, []string{"sessions"}, entries(t, root))
}

func TestPathsStayInside(t *testing.T) {
	d := files.New(t.TempDir())
	for _, p := range []string{"../x", "/etc/passwd", "a/../../x", "."} {
		_, err := d.Stage(p, strings.NewReader("ok\n"), lim, nonEmpty)
		require.Error(t, err, p)
		_, err = d.Open(p)
		require.Error(t, err, p)
	}
}
