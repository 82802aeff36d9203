package main

import (
	"fmt"
	"io"
	"time"
)

// subscriptionTable prints the subscription scenario's runs and, when
// PostGraphile 5 ran, Taskgraph's ratios to it at the same number of
// subscribers.
func subscriptionTable(w io.Writer, in reportInput) {
	if len(in.subs) == 0 {
		return
	}
	s := in.cfg.sub
	fmt.Fprintf(w, "\n### Subscriptions: one selection on one project, %g events/s for %s per run (PostgreSQL)\n\n", s.rate, s.duration)
	fmt.Fprintf(w, "Taskgraph: `projectEvents(projectId)` without `after`, one admin token; PostGraphile 5: its `listen` step on a trigger's NOTIFY, the task read per event. Events are `updateTask` (Taskgraph) or `updateTaskByRowId` (PostGraphile 5) through the server's API. Latency is receive time − the event's `occurredAt` (set inside the committing transaction: Taskgraph's event time, the trigger's `clock_timestamp()`), so it includes the commit itself. CPU is over the window and the drain, divided by the events delivered; each run's server is started for it and connects to PostgreSQL without a counting proxy, and its PostgreSQL CPU is every backend of the database's. RSS per idle subscription: (RSS with the subscriptions open, live and quiet − RSS before the connections) ÷ subscriptions; it includes the connections' own cost.\n\n")
	fmt.Fprintf(w, "| server | subscribers | events committed | delivered / expected | subscriptions short | p50 | p99 | server CPU per delivered event | PostgreSQL CPU per delivered event | RSS per idle subscription |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range in.subs {
		fmt.Fprintf(w, "| %s | %s | %s (%.1f/s) | %s / %s (%s) | %s | %s | %s | %s | %s | %s |\n", r.label, thousands(r.subscribers), thousands(int(r.committed)), r.rate(),
			thousands(int(r.delivered)), thousands(int(r.expected)), share(r.delivered, r.expected), thousands(r.short),
			ms(r.p50), ms(r.p99), us(r.serverPerEvent), us(r.dbPerEvent), kib(r.rssPerSub()))
	}
	fmt.Fprintln(w)
	for _, r := range in.subs {
		fmt.Fprintf(w, "- %s, %s subscribers: %d mutations (%d failed, %d not sent: 8 still waiting), window %s + drain %s; RSS %s → %s; the driver's own CPU per delivered event %s",
			shortName(&target{key: r.key}), thousands(r.subscribers), r.mutations, r.mutationsFailed, r.skipped,
			r.window.Round(time.Millisecond), r.drain.Round(time.Millisecond), mib(r.rssBefore), mib(r.rssIdle), us(r.drivePerE))
		if r.problems != "" {
			fmt.Fprintf(w, "; %s", r.problems)
		}
		fmt.Fprintln(w)
	}
	var tg, pg5 *subResult
	for i := range in.subs {
		r := &in.subs[i]
		if r.key == "pg5" {
			pg5 = r
		}
	}
	if pg5 == nil {
		return
	}
	for i := range in.subs {
		if r := &in.subs[i]; r.key == "taskgraph" && r.subscribers == pg5.subscribers {
			tg = r
		}
	}
	if tg == nil {
		return
	}
	fmt.Fprintf(w, "\n| Taskgraph ÷ PostGraphile 5, %s subscribers | delivered share | p50 | p99 | server CPU per delivered event | PostgreSQL CPU per delivered event | RSS per idle subscription |\n", thousands(tg.subscribers))
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(w, "| | %s | %s | %s | %s | %s | %s |\n",
		ratio(fraction(tg.delivered, tg.expected), fraction(pg5.delivered, pg5.expected)),
		ratio(float64(tg.p50), float64(pg5.p50)), ratio(float64(tg.p99), float64(pg5.p99)),
		ratio(float64(tg.serverPerEvent), float64(pg5.serverPerEvent)), ratio(float64(tg.dbPerEvent), float64(pg5.dbPerEvent)),
		ratio(tg.rssPerSub(), pg5.rssPerSub()))
	fmt.Fprintf(w, "\n(delivered share: above 1 is better for Taskgraph; below 1 in every other column)\n")
}

// rate is the events committed per second of the window: below the
// scenario's rate when the server kept 8 mutations waiting.
func (r subResult) rate() float64 {
	if r.window <= 0 {
		return 0
	}
	return float64(r.committed) / r.window.Seconds()
}

func fraction(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// share prints a/b as a percentage.
func share(a, b int64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f%%", 100*fraction(a, b))
}

// us prints a duration in microseconds.
func us(d time.Duration) string {
	f := float64(d) / float64(time.Microsecond)
	if f >= 100 {
		return fmt.Sprintf("%.0f µs", f)
	}
	return fmt.Sprintf("%.1f µs", f)
}

// kib prints bytes in KiB.
func kib(b float64) string { return fmt.Sprintf("%.1f KiB", b/1024) }
