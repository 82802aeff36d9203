package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/vektah/gqlparser/v2/formatter"

	"github.com/taskgraph/taskgraph/graph"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/store"
)

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: taskgraph migrate up|status [--database URL]")
		fs.PrintDefaults()
	}
	db := databaseFlag(fs)
	if len(args) == 0 || (args[0] != "up" && args[0] != "status") {
		fs.Usage()
		return errUsage
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	d, err := store.Open(ctx, *db)
	if err != nil {
		return err
	}
	defer d.Close()
	if args[0] == "up" {
		if err := d.Migrate(ctx); err != nil {
			return err
		}
	}
	st, err := d.MigrationStatuses(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tMIGRATION\tSTATE\tAPPLIED AT")
	for _, m := range st {
		state, at := "pending", ""
		if m.Applied {
			state, at = "applied", m.AppliedAt.UTC().Format("2006-01-02 15:04:05Z")
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", m.Version, m.Name, state, at)
	}
	return tw.Flush()
}

func runToken(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("token create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: taskgraph token create --role ADMIN|MEMBER|AGENT [--user SLUG] [--project SLUG] [--name NAME]")
		fs.PrintDefaults()
	}
	db := databaseFlag(fs)
	role := fs.String("role", "MEMBER", "ADMIN, MEMBER or AGENT")
	user := fs.String("user", "admin", "slug of the user the token acts as")
	project := fs.String("project", "", "slug of the project an AGENT token is bound to")
	name := fs.String("name", "cli", "a name to recognise the token by")
	if len(args) == 0 || args[0] != "create" {
		fs.Usage()
		return errUsage
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	r := domain.Role(strings.ToUpper(*role))
	if r != domain.RoleAdmin && r != domain.RoleMember && r != domain.RoleAgent {
		return fmt.Errorf("--role must be ADMIN, MEMBER or AGENT")
	}
	d, err := store.Open(ctx, *db)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Migrate(ctx); err != nil {
		return err
	}
	token, t, err := service.New(d, service.Options{}).Accounts.OperatorToken(ctx, *user, r, *project, *name)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "created %s token %s for user %s (shown once):\n", t.Role, t.GlobalID(), *user)
	fmt.Fprintln(stdout, token)
	return nil
}

func runSchema(stdout io.Writer) error {
	formatter.NewFormatter(stdout, formatter.WithIndent("  ")).FormatSchema(graph.NewExecutableSchema(graph.Config{}).Schema())
	return nil
}
