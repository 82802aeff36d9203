//go:build race

package main

// raceEnabled: the race detector slows the server (and the pure-Go SQLite
// driver most) by an order of magnitude, so measurements shrink their setup
// and their figures mean nothing.
const raceEnabled = true
