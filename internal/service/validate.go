package service

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/taskgraph/taskgraph/internal/domain"
)

var slugRE = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// checkSlug validates a lower-case, dash-separated slug of at most 64 characters.
func checkSlug(field, slug string) error {
	if len(slug) == 0 || len(slug) > 64 || !slugRE.MatchString(slug) {
		return domain.InputError(field, "slug must be 1-64 lower-case letters, digits and single dashes, e.g. my-project")
	}
	return nil
}

// checkText trims s and requires 1..max characters (0..max when optional).
func checkText(field, s string, max int, required bool) (string, error) {
	s = strings.TrimSpace(s)
	if required && s == "" {
		return "", domain.InputError(field, "%s must not be empty", field)
	}
	if utf8.RuneCountInString(s) > max {
		return "", domain.InputError(field, "%s is longer than %d characters", field, max)
	}
	return s, nil
}

// checkOptText is checkText for an optional field; nil stays nil.
func checkOptText(field string, s *string, max int) (*string, error) {
	if s == nil {
		return nil, nil
	}
	v, err := checkText(field, *s, max, false)
	return &v, err
}

// checkList validates a list of non-empty strings.
func checkList(field string, list []string, maxItems, maxLen int) ([]string, error) {
	if len(list) > maxItems {
		return nil, domain.InputError(field, "%s has more than %d entries", field, maxItems)
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		v, err := checkText(field, s, maxLen, true)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// checkUnit validates a number in 0..1.
func checkUnit(field string, v *float64) error {
	if v != nil && (*v < 0 || *v > 1) {
		return domain.InputError(field, "%s must be between 0 and 1", field)
	}
	return nil
}

const (
	maxName        = 200
	maxTitle       = 500
	maxDescription = 100_000
	maxListItems   = 200
	maxListEntry   = 2_000
)
