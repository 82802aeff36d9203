package domain

import (
	"fmt"
	"unicode/utf8"
)

// Limits on what agents send. A log line, test output and error texts
// longer than their cap are cut (the cut is marked); a call or an execution's
// log beyond its cap is refused or, for the log, stops growing: its older
// lines are kept, and the LOG_APPENDED event says how many lines were dropped.
const (
	MaxLogLineBytes        = 8 << 10  // one log line
	MaxLogLinesPerCall     = 1_000    // lines of one appendExecutionLog
	MaxLogBytesPerCall     = 1 << 20  // bytes of one appendExecutionLog
	MaxLogLinesPerExec     = 100_000  // lines an execution's log keeps
	MaxCurrentStep         = 500      // characters of a heartbeat's currentStep
	MaxTestOutputBytes     = 64 << 10 // a test result's output
	MaxErrorTextBytes      = 16 << 10 // a test result's or a failure's error text
	MaxExecutionNotesBytes = 16 << 10 // completeTask's and failTask's notes
	LogEventLines          = 5        // lines a LOG_APPENDED event carries
	LogEventLineBytes      = 500      // bytes of each of them
	maxLogLineMarkerBytes  = 40
)

// Clip cuts s to at most max bytes, on a character boundary, marking the cut
// with how many bytes were left out.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	marker := fmt.Sprintf("… [%d bytes cut]", len(s)-max)
	cut := max - len(marker)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + marker
}

// CheckLogBatch validates one appendExecutionLog call and clips its long
// lines.
func CheckLogBatch(lines []string) ([]string, error) {
	if len(lines) > MaxLogLinesPerCall {
		return nil, &Error{Code: CodeLimitExceeded, Field: "lines",
			Message: fmt.Sprintf("at most %d lines per call", MaxLogLinesPerCall), Details: map[string]any{"max": MaxLogLinesPerCall}}
	}
	total := 0
	out := make([]string, len(lines))
	for i, l := range lines {
		total += len(l)
		out[i] = Clip(l, MaxLogLineBytes)
	}
	if total > MaxLogBytesPerCall {
		return nil, &Error{Code: CodeLimitExceeded, Field: "lines",
			Message: fmt.Sprintf("at most %d bytes of lines per call", MaxLogBytesPerCall), Details: map[string]any{"max": MaxLogBytesPerCall}}
	}
	return out, nil
}

// LogRoom splits a batch into the lines an execution's log still has room
// for, given the lines it holds, and how many are dropped.
func LogRoom(held int, lines []string) (kept []string, dropped int) {
	room := max(MaxLogLinesPerExec-held, 0)
	if len(lines) <= room {
		return lines, 0
	}
	return lines[:room], len(lines) - room
}

// LogSummary is what a LOG_APPENDED event carries of a batch: its first few
// lines, each clipped short; the whole log is read from TaskExecution.log.
func LogSummary(lines []string) []string {
	n := min(len(lines), LogEventLines)
	out := make([]string, n)
	for i := range n {
		out[i] = Clip(lines[i], LogEventLineBytes)
	}
	return out
}

// ClipOpt is Clip for an optional text.
func ClipOpt(s *string, max int) *string {
	if s == nil {
		return nil
	}
	v := Clip(*s, max)
	return &v
}

// CheckAgentTexts validates and clips the free texts of agent calls: a
// heartbeat's current step (refused when too long: it names a step, it is
// not a log), a test result's name, output and error, a failure's error.
func CheckAgentTexts(step *string, testName *string) error {
	if step != nil && utf8.RuneCountInString(*step) > MaxCurrentStep {
		return InputError("currentStep", "currentStep is longer than %d characters", MaxCurrentStep)
	}
	if testName != nil && utf8.RuneCountInString(*testName) > MaxName {
		return InputError("testName", "testName is longer than %d characters", MaxName)
	}
	return nil
}
