package domain

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

var slugRE = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// CheckSlug validates a lower-case, dash-separated slug of at most 64 characters.
func CheckSlug(field, slug string) error {
	if len(slug) == 0 || len(slug) > 64 || !slugRE.MatchString(slug) {
		return InputError(field, "slug must be 1-64 lower-case letters, digits and single dashes, e.g. my-project")
	}
	return nil
}

// CheckText trims s and requires 1..max characters (0..max when optional).
func CheckText(field, s string, max int, required bool) (string, error) {
	s = strings.TrimSpace(s)
	if required && s == "" {
		return "", InputError(field, "%s must not be empty", field)
	}
	if utf8.RuneCountInString(s) > max {
		return "", InputError(field, "%s is longer than %d characters", field, max)
	}
	return s, nil
}

// CheckOptText is CheckText for an optional field; nil stays nil.
func CheckOptText(field string, s *string, max int) (*string, error) {
	if s == nil {
		return nil, nil
	}
	v, err := CheckText(field, *s, max, false)
	return &v, err
}

// CheckList validates a list of non-empty strings.
func CheckList(field string, list []string, maxItems, maxLen int) ([]string, error) {
	if len(list) > maxItems {
		return nil, InputError(field, "%s has more than %d entries", field, maxItems)
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		v, err := CheckText(field, s, maxLen, true)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// CheckUnit validates a number in 0..1.
func CheckUnit(field string, v *float64) error {
	if v != nil && (*v < 0 || *v > 1) {
		return InputError(field, "%s must be between 0 and 1", field)
	}
	return nil
}

// Deadlines lie between these (a zero time, year 1, would read back as none).
var (
	minDeadline = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	maxDeadline = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

// CheckDeadline validates a deadline: from 1970 to 9999.
func CheckDeadline(field string, t *time.Time) error {
	if t != nil && (t.Before(minDeadline) || t.After(maxDeadline)) {
		return InputError(field, "%s must lie between 1970 and 9999", field)
	}
	return nil
}

// CheckEffortMinutes validates an actual effort in minutes: not negative.
func CheckEffortMinutes(field string, v *int) error {
	if v != nil && *v < 0 {
		return InputError(field, "%s must not be negative", field)
	}
	return nil
}

// Limits on the sizes of common text inputs.
const (
	MaxName        = 200
	MaxTitle       = 500
	MaxDescription = 100_000
	MaxListItems   = 200
	MaxListEntry   = 2_000
	// A completed task's files and commits, as an agent reports them.
	MaxReportedFiles = 10_000
	MaxPathLength    = 4_096
)

// CheckClaim bounds what an agent says of itself when it claims: its host,
// process and working directory are shown to people and kept per agent.
func CheckClaim(in *ClaimTaskInput) (err error) {
	if in.Hostname, err = CheckOptText("hostname", in.Hostname, 255); err != nil {
		return err
	}
	if in.ProcessID, err = CheckOptText("processId", in.ProcessID, 64); err != nil {
		return err
	}
	in.WorkingDirectory, err = CheckOptText("workingDirectory", in.WorkingDirectory, 4096)
	return err
}
