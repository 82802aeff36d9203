// Command testsummary reads `go test -json` on stdin and prints what a person
// needs from a long run: each package's result line, the whole output of every
// test that failed, and at the end the tests that were skipped, grouped by the
// reason they gave — so a suite left out (no PostgreSQL, no chromium, -short)
// is never silent. It exits 1 when any test or package failed.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of test2json's output.
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Output     string
}

// maxExamples bounds the test names printed under one skip reason.
const maxExamples = 4

type key struct{ pkg, test string }

// summary holds the run's state while events stream in.
type summary struct {
	out      io.Writer
	output   map[key][]string // a running test's lines, printed if it fails
	skipped  map[string][]string
	failed   []string
	pkgFails int
}

func main() {
	if !run(os.Stdin, os.Stdout) {
		os.Exit(1)
	}
}

// run reads the events from in, writes the summary to out and says whether
// the run passed.
func run(in io.Reader, out io.Writer) bool {
	s := &summary{out: out, output: map[key][]string{}, skipped: map[string][]string{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			fmt.Fprintln(s.out, string(line)) // not test2json: a build error or go's own message
			continue
		}
		s.add(e)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(out, "testsummary: reading go test's output:", err)
		return false
	}
	return s.report()
}

// add takes one event.
func (s *summary) add(e event) {
	switch e.Action {
	case "build-output":
		fmt.Fprint(s.out, e.Output)
		return
	case "build-fail":
		s.pkgFails++
		return
	}
	if e.Test == "" {
		s.addPackage(e)
		return
	}
	k := key{e.Package, e.Test}
	switch e.Action {
	case "output":
		s.output[k] = append(s.output[k], e.Output)
	case "pass":
		delete(s.output, k)
	case "skip":
		reason := skipReason(s.output[k])
		s.skipped[reason] = append(s.skipped[reason], e.Test+" ("+shortPkg(e.Package)+")")
		delete(s.output, k)
	case "fail":
		for _, l := range s.output[k] {
			fmt.Fprint(s.out, l)
		}
		s.failed = append(s.failed, e.Test+" ("+shortPkg(e.Package)+")")
		delete(s.output, k)
	}
}

// addPackage prints a package's own lines: its ok/FAIL line, and anything a
// crash or timeout printed outside a test.
func (s *summary) addPackage(e event) {
	switch e.Action {
	case "output":
		if t := strings.TrimSpace(e.Output); t != "PASS" && t != "FAIL" && t != "" {
			fmt.Fprint(s.out, e.Output)
		}
	case "fail":
		s.pkgFails++
		// a package that died (panic, timeout) leaves its running tests' lines unprinted
		for k, lines := range s.output {
			if k.pkg == e.Package {
				for _, l := range lines {
					fmt.Fprint(s.out, l)
				}
				delete(s.output, k)
			}
		}
	}
}

// skipReason is the message a skipped test gave: its last line that is not
// the framework's own.
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		if _, msg, ok := strings.Cut(l, ": "); ok && strings.Contains(l[:len(l)-len(msg)], ".go:") {
			return msg
		}
		return l
	}
	return "(no reason given)"
}

// shortPkg drops a module path's host/owner/name: github.com/o/n/cmd/x → cmd/x.
func shortPkg(p string) string {
	parts := strings.SplitN(p, "/", 4)
	if len(parts) == 4 && strings.Contains(parts[0], ".") {
		return parts[3]
	}
	return p
}

// report prints the closing summary and says whether the run passed.
func (s *summary) report() bool {
	fmt.Fprintln(s.out)
	if len(s.skipped) > 0 {
		reasons := make([]string, 0, len(s.skipped))
		for r := range s.skipped {
			reasons = append(reasons, r)
		}
		sort.Slice(reasons, func(i, j int) bool { return len(s.skipped[reasons[i]]) > len(s.skipped[reasons[j]]) })
		fmt.Fprintln(s.out, "SKIPPED — what this run left out, and why:")
		for _, r := range reasons {
			tests := s.skipped[r]
			ex := tests
			if len(ex) > maxExamples {
				ex = ex[:maxExamples]
			}
			more := ""
			if len(tests) > len(ex) {
				more = fmt.Sprintf(", … %d more", len(tests)-len(ex))
			}
			fmt.Fprintf(s.out, "  %4d  %s\n        %s%s\n", len(tests), r, strings.Join(ex, ", "), more)
		}
	} else {
		fmt.Fprintln(s.out, "SKIPPED — nothing: every suite ran.")
	}
	if len(s.failed) > 0 || s.pkgFails > 0 {
		fmt.Fprintf(s.out, "FAILED — %d tests, %d packages:\n", len(s.failed), s.pkgFails)
		for _, f := range s.failed {
			fmt.Fprintln(s.out, "  "+f)
		}
		return false
	}
	return true
}
