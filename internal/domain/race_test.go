//go:build race

package domain_test

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts of pooled code (encoding/json's scanner) vary.
const raceEnabled = true
