package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// reportInput is everything the report prints.
type reportInput struct {
	cfg       config
	order     []*target
	results   map[string]map[string]summary // scenario → target key
	verified  *verified
	pgVersion string
	rows      *dbFacts
	subs      []subResult
}

// report prints the markdown tables: per scenario the figures of every
// server, then Taskgraph's ratios to each of the others.
func report(w io.Writer, in reportInput) {
	c := in.cfg
	fmt.Fprintf(w, "\n## Taskgraph side by side with PostGraphile (make bench-peer)\n\n")
	fmt.Fprintf(w, "- machine: %d CPUs (%s/%s), PostgreSQL %s, %s; %s\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH,
		in.pgVersion, runtime.Version(), time.Now().UTC().Format("2006-01-02 15:04Z"))
	if in.rows != nil {
		fmt.Fprintf(w, "- data: %s, filled through Taskgraph's API, then ANALYZE\n", in.rows)
	}
	if len(in.results) > 0 {
		fmt.Fprintf(w, "- load: %d connections, closed loop; servers in turn, %d round(s) of %s each (after %s of warm-up each); percentiles over every request of every round\n",
			c.connections, c.rounds, c.duration, c.warmup)
		backendsOf := "the PostgreSQL backends of its connections"
		if !c.countStmts {
			backendsOf = "every PostgreSQL backend of the database"
		}
		fmt.Fprintf(w, "- CPU per request: utime+stime of the server process (/proc/<pid>/stat), and of %s, over the requests of its turns\n", backendsOf)
		if c.countStmts {
			fmt.Fprintf(w, "- SQL statements per request: Query and Execute messages (BEGIN and COMMIT included) the server sent through its counting proxy: the mean under load / the fewest of %d requests sent alone\n", aloneTries)
		}
	}
	for _, sc := range timedScenarios() {
		res, ok := in.results[sc.key]
		if !ok {
			continue
		}
		// The servers timed in this scenario (floorw only writes).
		order := slices.DeleteFunc(slices.Clone(in.order), func(t *target) bool { _, ok := res[t.key]; return !ok })
		fmt.Fprintf(w, "\n### %s", sc.title)
		if f, ok := in.verified.reads[sc.key]; ok {
			fmt.Fprintf(w, " (%s tasks, %s objects, %s values: the same from every server)",
				thousands(f.tasks), thousands(f.objects), thousands(f.values))
		}
		fmt.Fprintf(w, "\n\n| %d connections, tables analysed | p50 | p99 | req/s | server CPU per request | PostgreSQL CPU per request | SQL statements per request |\n",
			c.connections)
		fmt.Fprintf(w, "|---|---|---|---|---|---|---|\n")
		for _, t := range order {
			s := res[t.key]
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", t.label, ms(s.p50), ms(s.p99), rate(s.reqPerSec),
				ms(s.cpuPerReq), ms(s.dbCPUPerReq), statements(s.stmtsPerReq, in.verified.aloneOf(sc.key, t.key)))
		}
		var rounds []string
		for _, t := range order {
			var rs []string
			for _, r := range res[t.key].roundRates {
				rs = append(rs, rate(r))
			}
			rounds = append(rounds, fmt.Sprintf("%s %s", shortName(t), strings.Join(rs, ", ")))
		}
		fmt.Fprintf(w, "\nreq/s by round: %s\n", strings.Join(rounds, " · "))
		var driver []string
		for _, t := range order {
			driver = append(driver, fmt.Sprintf("%s %s", shortName(t), ms(res[t.key].driverPerReq)))
		}
		fmt.Fprintf(w, "\nthe driver's own CPU per request (load generator, proxies, sampling), taken from the same cores: %s\n", strings.Join(driver, " · "))
		for _, t := range order {
			if n := res[t.key].backendsEnded; n > 0 {
				fmt.Fprintf(w, "\nnote: %d PostgreSQL backends of %s ended during its turns (its pool closed connections); each counts with the CPU time it was last sampled with, up to %s before its end.\n", n, shortName(t), dbSampleInterval)
			}
		}

		tg, ok := res["taskgraph"]
		if !ok || len(order) < 2 {
			continue
		}
		fmt.Fprintf(w, "\n| Taskgraph ÷ | p50 | p99 | req/s | server CPU per request | PostgreSQL CPU per request | SQL statements per request |\n")
		fmt.Fprintf(w, "|---|---|---|---|---|---|---|\n")
		for _, t := range order {
			if t.key == "taskgraph" {
				continue
			}
			s := res[t.key]
			stmts := "n/a"
			if tg.stmtsPerReq >= 0 && s.stmtsPerReq > 0 {
				stmts = ratio(tg.stmtsPerReq, s.stmtsPerReq)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", t.label,
				ratio(float64(tg.p50), float64(s.p50)), ratio(float64(tg.p99), float64(s.p99)), ratio(tg.reqPerSec, s.reqPerSec),
				ratio(float64(tg.cpuPerReq), float64(s.cpuPerReq)), ratio(float64(tg.dbCPUPerReq), float64(s.dbCPUPerReq)), stmts)
		}
		fmt.Fprintf(w, "\n(above 1 is better for Taskgraph in req/s; below 1 in every other column)\n")
	}
	summaryTable(w, in)
	subscriptionTable(w, in)
}

// summaryTable puts every timed scenario's ratios side by side: Taskgraph's
// requests/s and CPU per request (its process and its PostgreSQL
// backends), and its ratio to each other server's.
func summaryTable(w io.Writer, in reportInput) {
	var peers []*target
	for _, t := range in.order {
		if t.key != "taskgraph" {
			peers = append(peers, t)
		}
	}
	var rows []scenario
	for _, sc := range timedScenarios() {
		if _, ok := in.results[sc.key]["taskgraph"]; ok {
			rows = append(rows, sc)
		}
	}
	if len(peers) == 0 || len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### Every scenario side by side\n\nCPU is per request, the server's process and its PostgreSQL backends together; × is Taskgraph ÷ the other (req/s: above 1 is better for Taskgraph; CPU: below 1).\n\n")
	fmt.Fprintf(w, "| scenario | Taskgraph req/s | Taskgraph CPU |")
	sep := "|---|---|---|"
	for _, p := range peers {
		fmt.Fprintf(w, " %s req/s | req/s × | CPU × |", shortName(p))
		sep += "---|---|---|"
	}
	fmt.Fprintf(w, "\n%s\n", sep)
	for _, sc := range rows {
		res := in.results[sc.key]
		tg := res["taskgraph"]
		fmt.Fprintf(w, "| %s | %s | %s |", scenarioName(sc.key), rate(tg.reqPerSec), ms(tg.cpuPerReq+tg.dbCPUPerReq))
		for _, p := range peers {
			s, ok := res[p.key]
			if !ok {
				fmt.Fprintf(w, " n/a | n/a | n/a |")
				continue
			}
			fmt.Fprintf(w, " %s | %s | %s |", rate(s.reqPerSec), ratio(tg.reqPerSec, s.reqPerSec),
				ratio(float64(tg.cpuPerReq+tg.dbCPUPerReq), float64(s.cpuPerReq+s.dbCPUPerReq)))
		}
		fmt.Fprintln(w)
	}
}

// scenarioName is a scenario's short name in the summary.
func scenarioName(key string) string {
	if key == "write" {
		return "createTask"
	}
	return key + " read"
}

func shortName(t *target) string {
	switch t.key {
	case "taskgraph":
		return "Taskgraph"
	case "pg4":
		return "PostGraphile 4"
	case "pg5":
		return "PostGraphile 5"
	case "floorw":
		return "floor with Taskgraph's writes"
	default:
		return "floor"
	}
}

// ms prints a duration in milliseconds with three significant digits or so.
func ms(d time.Duration) string {
	f := float64(d) / float64(time.Millisecond)
	switch {
	case f >= 100:
		return fmt.Sprintf("%.0f ms", f)
	case f >= 10:
		return fmt.Sprintf("%.1f ms", f)
	default:
		return fmt.Sprintf("%.2f ms", f)
	}
}

// thousands prints n with commas: 1,400.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func rate(r float64) string {
	if r >= 100 {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.1f", r)
}

func statements(underLoad float64, alone int64) string {
	if underLoad < 0 || alone < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f / %d", underLoad, alone)
}

func ratio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f×", a/b)
}
