package gqlexec

import (
	"sync/atomic"
	"time"
)

// Workers run functions on goroutines that outlive them. The executor's
// frames are deep: a new goroutine's stack grows, by copying, several times
// before it can marshal one element, and the runtime spent more time on
// that than on the element. A worker's stack has grown already.
//
// Workers left idle are kept, up to a bound, so that the next request's
// elements find them; Trim stops those that stayed idle for a whole period
// (TrimEvery), so that a burst's workers do not keep their stacks forever.
type Workers struct {
	idle chan *worker
	// low is the fewest workers idle at any moment since the last Trim:
	// that many were never needed.
	low atomic.Int64
}

type worker struct{ job chan job }

// job is f(), or at(i): an index travels with a function shared by many
// jobs, where a closure per job would be an allocation.
type job struct {
	f  func()
	at func(int)
	i  int
}

// NewWorkers returns a pool that keeps at most maxIdle workers waiting.
func NewWorkers(maxIdle int) *Workers {
	return &Workers{idle: make(chan *worker, maxIdle)}
}

// TrimEvery trims the pool every period, for as long as the process runs
// (a pool is a process's own); it returns p.
func (p *Workers) TrimEvery(period time.Duration) *Workers {
	go func() {
		for range time.Tick(period) {
			p.Trim()
		}
	}()
	return p
}

// Trim stops the workers that stayed idle since the last Trim, and returns
// how many it stopped.
func (p *Workers) Trim() int {
	stopped := 0
stop:
	for n := p.low.Load(); int64(stopped) < n; {
		select {
		case w := <-p.idle:
			close(w.job)
			stopped++
		default:
			break stop
		}
	}
	p.low.Store(int64(len(p.idle)))
	return stopped
}

// noteIdle lowers low to the number of idle workers now.
func (p *Workers) noteIdle() {
	n := int64(len(p.idle))
	for {
		l := p.low.Load()
		if n >= l || p.low.CompareAndSwap(l, n) {
			return
		}
	}
}

// Run runs f on an idle worker, or on a new one: never waits for a worker,
// since an element may wait on a loader batch the next one fills.
func (p *Workers) Run(f func()) { p.run(job{f: f}) }

// RunAt runs f(i) as Run runs a function.
func (p *Workers) RunAt(f func(int), i int) { p.run(job{at: f, i: i}) }

func (p *Workers) run(j job) {
	select {
	case w := <-p.idle:
		p.noteIdle()
		w.job <- j
	default:
		p.low.Store(0)
		w := &worker{job: make(chan job, 1)}
		w.job <- j
		go p.serve(w)
	}
}

// workerBallast is stack every worker keeps in use below its jobs' frames.
// The garbage collector halves a goroutine's stack when less than a quarter
// of it is in use, as it is for a worker waiting for its next job: its stack
// grew for nothing, and grows again, by copying, on the next job. With the
// ballast in use, a worker keeps a stack of up to four times the ballast
// (32 KiB: the executor's frames of a nested element fit in it).
const workerBallast = 8 << 10

// serve runs w's jobs, above the ballast, until there is no room left among
// the idle workers.
func (p *Workers) serve(w *worker) {
	var ballast [workerBallast]byte
	p.loop(w, &ballast)
}

// loop is serve's loop; it takes the ballast so that the ballast stays in
// serve's frame, under loop's.
//
//go:noinline
func (p *Workers) loop(w *worker, _ *[workerBallast]byte) {
	for j := range w.job {
		if j.at != nil {
			j.at(j.i)
		} else {
			j.f()
		}
		select {
		case p.idle <- w:
		default:
			return
		}
	}
}
