// Package readme has no code. Its tests hold README.md to what it shows a
// user: every GraphQL document in it validates against the schema, and on a
// fresh clone of the repository `make run` starts the server and every shell
// command of the README runs as printed (readme_test.go says which are left
// out and why, and how placeholders such as tg_… are filled).
package readme
