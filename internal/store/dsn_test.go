package store

import "testing"

func TestPostgresDSNSendsArgumentsInOneRoundTrip(t *testing.T) {
	for url, want := range map[string]string{
		"postgres://u@h/db":                                "postgres://u@h/db?binary_parameters=yes",
		"postgres://u@h/db?sslmode=disable":                "postgres://u@h/db?binary_parameters=yes&sslmode=disable",
		"postgresql://u@h/db?binary_parameters=no&x=1":     "postgresql://u@h/db?binary_parameters=no&x=1",
		"postgres://u:p%40ss@h:5433/db?application_name=a": "postgres://u:p%40ss@h:5433/db?application_name=a&binary_parameters=yes",
	} {
		got, err := postgresDSN(url)
		if err != nil || got != want {
			t.Errorf("postgresDSN(%q) = %q, %v; want %q", url, got, err, want)
		}
	}
}
