package domain_test

import (
	"bytes"
	"database/sql/driver"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

func TestStringsValue(t *testing.T) {
	tests := []struct {
		name string
		in   domain.Strings
		want driver.Value
	}{
		{"nil is an empty array", nil, "[]"},
		{"empty", domain.Strings{}, "[]"},
		{"values", domain.Strings{"a", "b \"q\"", "ü"}, `["a","b \"q\"","ü"]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.in.Value()
			require.NoError(t, err)
			require.Equal(t, tc.want, v)
		})
	}
}

func TestStringsScan(t *testing.T) {
	tests := []struct {
		name    string
		src     any
		want    domain.Strings
		wantErr bool
	}{
		{"nil", nil, domain.Strings{}, false},
		{"bytes", []byte(`["x","y"]`), domain.Strings{"x", "y"}, false},
		{"string", `["x"]`, domain.Strings{"x"}, false},
		{"json null", `null`, domain.Strings{}, false},
		{"empty array", `[]`, domain.Strings{}, false},
		{"not json", `[x`, nil, true},
		{"not an array of strings", `[1,2]`, nil, true},
		{"unsupported type", 42, domain.Strings{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s domain.Strings
			err := s.Scan(tc.src)
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, s)
			require.Equal(t, tc.want, s)
		})
	}
}

func TestStringsScanRoundTrip(t *testing.T) {
	in := domain.Strings{"go test ./...", "", "line\nbreak"}
	v, err := in.Value()
	require.NoError(t, err)
	var out domain.Strings
	require.NoError(t, out.Scan(v))
	require.Equal(t, in, out)
}

func TestJSONValueScan(t *testing.T) {
	v, err := domain.JSON(nil).Value()
	require.NoError(t, err)
	require.Nil(t, v)
	v, err = domain.JSON(`{"a":1}`).Value()
	require.NoError(t, err)
	require.Equal(t, `{"a":1}`, v)

	var j domain.JSON
	require.NoError(t, j.Scan(nil))
	require.Nil(t, j)
	src := []byte(`{"k":[1,2]}`)
	require.NoError(t, j.Scan(src))
	require.Equal(t, domain.JSON(`{"k":[1,2]}`), j)
	src[2] = 'X'
	require.Equal(t, domain.JSON(`{"k":[1,2]}`), j, "Scan copies the driver's buffer")
	require.NoError(t, j.Scan(`[true]`))
	require.Equal(t, domain.JSON(`[true]`), j)
	require.Error(t, j.Scan(3.5))
}

func TestJSONGQL(t *testing.T) {
	var buf bytes.Buffer
	domain.JSON(nil).MarshalGQL(&buf)
	require.Equal(t, "null", buf.String())
	buf.Reset()
	domain.JSON(`{"a":"b"}`).MarshalGQL(&buf)
	require.Equal(t, `{"a":"b"}`, buf.String())

	var j domain.JSON
	require.NoError(t, j.UnmarshalGQL(map[string]any{"n": 1, "l": []any{"x", true}}))
	require.JSONEq(t, `{"n":1,"l":["x",true]}`, string(j))
	require.NoError(t, j.UnmarshalGQL(nil))
	require.Equal(t, "null", string(j))
	require.Error(t, j.UnmarshalGQL(make(chan int)))
}
