package store

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRowSizer: a row's charge is its strings' and byte slices' lengths
// (behind pointers and in slices too) plus a word per field, a nil pointer
// a word; unexported fields are not looked into.
func TestRowSizer(t *testing.T) {
	type status string
	type row struct {
		Title   string
		Status  status
		Blob    []byte
		Note    *string
		Missing *string
		Tags    []string
		At      time.Time
		Count   int
		hidden  string
	}
	note := "four"
	r := row{Title: "abc", Status: "DRAFT", Blob: []byte{1, 2}, Note: &note, Tags: []string{"x", "yz"}, At: time.Now(), hidden: "ignored"}
	// Words: 9 fields; text: 3+5+2+4+(1+2); a nil pointer: a word; the
	// time: a struct of 3 unexported fields, 3 words.
	want := 8*9 + 3 + 5 + 2 + 4 + 3 + 8 + 8*3
	v := reflect.ValueOf(&r).Elem()
	require.Equal(t, want, sizerOf(v.Type()).size(v))
	require.Equal(t, want, sizeOf(v))
	require.Equal(t, want, sizeOf(reflect.ValueOf(&r)), "through a pointer")
	require.Same(t, sizerOf(v.Type()), sizerOf(v.Type()), "worked out once per type")
}
