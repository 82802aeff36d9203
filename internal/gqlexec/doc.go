// Package gqlexec holds what graph's rewritten executor calls
// (internal/tools/execpass rewrites graph/generated.go to call the thin
// adapters of graph/marshal.go, graph/dispatch.go and graph/collect.go,
// which call this package): worker goroutines for list elements and
// concurrent fields, an object written from its collected fields, the
// per-operation cache of collected fields, enum marshallers, and the
// schema's Time scalar (bound in gqlgen.yml).
//
// It lives apart from graph so that its tests do not compile graph's
// generated executor a second time, as a test variant.
package gqlexec
