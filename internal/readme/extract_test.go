package readme

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// block is one fenced code block of the README.
type block struct {
	lang    string // the fence's info string: sh, graphql, json, …
	line    int    // line of the opening fence, 1-based
	section string // the ## heading it is under
	text    string // its lines, without the fences
}

// blocks reads the fenced code blocks of a markdown document in order.
func blocks(md string) []block {
	var out []block
	var cur *block
	var section string
	var body []string
	sc := bufio.NewScanner(strings.NewReader(md))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(l, "```"):
			cur = &block{lang: strings.TrimSpace(strings.TrimPrefix(l, "```")), line: n, section: section}
			body = nil
		case cur != nil && strings.TrimSpace(l) == "```":
			cur.text = strings.Join(body, "\n")
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			body = append(body, l)
		case strings.HasPrefix(l, "## "):
			section = strings.TrimPrefix(l, "## ")
		}
	}
	return out
}

// command is one shell command of a block: the shortest run of its lines
// that bash parses on its own (so a line ending in \, a function or a for
// loop spanning lines is one command), with blank and comment-only lines
// left out.
type command struct {
	block block
	line  int    // its first line in the README
	text  string // as printed, lines joined by \n
}

// commands splits an sh block into its commands.
func commands(t testing.TB, b block) []command {
	t.Helper()
	var out []command
	var acc []string
	first := 0
	for i, l := range strings.Split(b.text, "\n") {
		if len(acc) == 0 {
			if s := strings.TrimSpace(l); s == "" || strings.HasPrefix(s, "#") {
				continue
			}
			first = b.line + 1 + i
		}
		acc = append(acc, l)
		text := strings.Join(acc, "\n")
		if strings.HasSuffix(strings.TrimRight(l, " "), "\\") || !bashParses(t, placeholder.ReplaceAllString(text, "X")) {
			continue
		}
		out = append(out, command{block: b, line: first, text: text})
		acc = nil
	}
	if len(acc) > 0 {
		t.Fatalf("README.md:%d: the sh block ends inside a command bash cannot parse:\n%s", first, strings.Join(acc, "\n"))
	}
	return out
}

// placeholder is what the user fills in: <the project id>, <run id>, <cursor>.
var placeholder = regexp.MustCompile(`<[a-z][^<>\n]*>`)

// bashParses says whether bash -n accepts the text as a whole script.
func bashParses(t testing.TB, text string) bool {
	t.Helper()
	cmd := exec.Command("bash", "-n")
	cmd.Stdin = strings.NewReader(text + "\n")
	return cmd.Run() == nil
}

// dropComment drops a line's trailing "# …" comment: a # after a blank,
// outside quotes.
func dropComment(l string) string {
	var quote rune
	prev := ' '
	for i, c := range l {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (prev == ' ' || prev == '\t'):
			return strings.TrimRight(l[:i], " \t")
		}
		prev = c
	}
	return l
}

// bare is the command as matched against the table: one line, comments
// dropped, spaces collapsed.
func (c command) bare() string {
	var parts []string
	for _, l := range strings.Split(c.text, "\n") {
		l = dropComment(l)
		l = strings.TrimSuffix(strings.TrimSpace(l), "\\")
		parts = append(parts, strings.TrimSpace(l))
	}
	return strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
}

func TestCommandsSplitAsBashParses(t *testing.T) {
	b := block{lang: "sh", line: 10, text: "# a comment\nexport A=1   # why\n\nf() { echo \"$1\" |\n  cat ; }\nfor n in 1 2; do\n  f $n\ndone\ncurl -s x \\\n  -H 'y'"}
	var got []string
	var lines []int
	for _, c := range commands(t, b) {
		got = append(got, c.bare())
		lines = append(lines, c.line)
	}
	want := []string{"export A=1", `f() { echo "$1" | cat ; }`, "for n in 1 2; do f $n done", "curl -s x -H 'y'"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("commands = %q, want %q", got, want)
	}
	if lines[0] != 12 || lines[1] != 14 || lines[2] != 16 || lines[3] != 19 {
		t.Fatalf("lines = %v", lines)
	}
}

func TestBlocksKeepTheirSection(t *testing.T) {
	md := "# T\n\n## One\n\n```sh\nmake run\n```\n\ntext\n\n## Two\n\n```graphql\n{ a }\n```\n"
	bs := blocks(md)
	if len(bs) != 2 || bs[0].section != "One" || bs[0].lang != "sh" || bs[0].text != "make run" || bs[0].line != 5 ||
		bs[1].section != "Two" || bs[1].lang != "graphql" || bs[1].text != "{ a }" {
		t.Fatalf("blocks = %+v", bs)
	}
}

// TestREADMECommandsKnown: every command of the README's sh blocks is a step
// of TestREADMECommands's table (run, or not run with a reason); this runs
// under -short too, so an edit of the README learns it at once.
func TestREADMECommandsKnown(t *testing.T) {
	md, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks(string(md)) {
		if b.lang == "sh" {
			for _, c := range commands(t, b) {
				stepFor(t, c)
			}
		}
	}
}
