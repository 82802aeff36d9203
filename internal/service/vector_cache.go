package service

import (
	"container/list"
	"sync"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// vectorCacheBytes bounds the memory the vector cache holds: 256 MiB is
// about 87,000 vectors of 768 float32. A project's vectors of one model that
// alone exceed it are not cached: searches then read them page by page.
const vectorCacheBytes = 256 << 20

// vectorCache keeps projects' task vectors of a model, decoded, with their
// norms, so that a similarity search scores them without reading them: the
// database then sends one stamp (TaskVectorStamp) instead of every vector.
// An entry serves while its stamp is the database's; the least recently used
// entries go first when the bytes run out. Per replica; every replica checks
// the stamp, so none serves vectors another changed.
type vectorCache struct {
	mu      sync.Mutex
	entries map[vectorKey]*list.Element
	lru     *list.List // of *vectorSet, most recent first
	bytes   int64
	max     int64
}

type vectorKey struct{ project, model string }

// vectorSet is a project's task vectors of one model as of stamp.
type vectorSet struct {
	key   vectorKey
	stamp string
	ids   []string
	vecs  [][]float32
	norms []float64
	bytes int64
}

func newVectorCache(max int64) *vectorCache {
	return &vectorCache{entries: map[vectorKey]*list.Element{}, lru: list.New(), max: max}
}

// get returns the vectors of key if they are as of stamp.
func (c *vectorCache) get(key vectorKey, stamp string) *vectorSet {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if e == nil {
		return nil
	}
	set := e.Value.(*vectorSet)
	if set.stamp != stamp {
		c.remove(e)
		return nil
	}
	c.lru.MoveToFront(e)
	return set
}

// put keeps set, making room by dropping the least recently used.
func (c *vectorCache) put(set *vectorSet) {
	if set.bytes > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[set.key]; e != nil {
		c.remove(e)
	}
	for c.bytes+set.bytes > c.max {
		c.remove(c.lru.Back())
	}
	c.entries[set.key] = c.lru.PushFront(set)
	c.bytes += set.bytes
}

func (c *vectorCache) remove(e *list.Element) {
	set := c.lru.Remove(e).(*vectorSet)
	delete(c.entries, set.key)
	c.bytes -= set.bytes
}

// add appends one stored vector to the set being built.
func (s *vectorSet) add(id string, raw []byte) {
	v := domain.DecodeVector(nil, raw)
	s.ids = append(s.ids, id)
	s.vecs = append(s.vecs, v)
	s.norms = append(s.norms, domain.Norm(v))
	s.bytes += int64(len(v))*4 + int64(len(id)) + 64
}
