package main

import (
	"flag"
	"os"
)

// secretValue is a flag holding a secret (an API token, a bot token): its
// value never appears in usage or help text, whether it came from the
// environment or the command line.
type secretValue struct{ p *string }

func (s secretValue) String() string { return "" }

func (s secretValue) Set(v string) error {
	*s.p = v
	return nil
}

// secretFlag defines a secret flag whose default is the environment variable
// env; the help says whether that variable is set, never what it holds.
func secretFlag(fs *flag.FlagSet, p *string, name, env, usage string) {
	*p = os.Getenv(env)
	note := " (env " + env + ")"
	if *p != "" {
		note = " (env " + env + ": set, not shown)"
	}
	fs.Var(secretValue{p}, name, usage+note)
}
