// Package app is the kernel every domain's use-cases build on: the
// transaction a use-case holds (Tx) and the Runner that commits it, the caller
// and what it may see, and the request's batched readers (Loaders) with the
// paging of nested connection fields.
//
// It knows no domain: the core (internal/service), the catalog
// (internal/catalog) and each domain after them hold their own use-cases and
// use these pieces the same way.
package app
