package events

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWindowBoundedInBytes: a feed's window evicts its oldest events when
// the next would take its payload bytes past WindowBytes, not only when it
// holds Window events: a few huge events cannot fill the server's memory.
func TestWindowBoundedInBytes(t *testing.T) {
	f := &feed{b: &Broker{opts: Options{Window: 10, WindowBytes: 1000}}, ring: make([]entry, 10)}
	for seq := int64(1); seq <= 5; seq++ {
		f.push(entry{seq: seq, size: 400})
		require.LessOrEqual(t, f.bytes, 1000)
	}
	require.Equal(t, 2, f.n, "two 400-byte events fit in 1000 bytes")
	require.Equal(t, int64(3), f.from, "events 1-3 left the window")
	f.push(entry{seq: 6, size: 5000})
	require.Equal(t, 1, f.n, "an event larger than the window still enters it, alone")
	require.Equal(t, int64(5), f.from)
	for seq := int64(7); seq <= 30; seq++ {
		f.push(entry{seq: seq, size: 1})
	}
	require.Equal(t, 10, f.n, "small events are bounded by count")
	require.Equal(t, int64(20), f.from)
}
