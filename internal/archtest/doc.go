// Package archtest holds the test that keeps the imports between Taskgraph's
// packages in the direction docs/architecture.md draws. It has no code.
package archtest
