package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/oidcprovider"
	"github.com/hubd/hubd/internal/password"
)

// userCmd is `hubd user add`: a local user of the embedded OpenID provider. The password is the first
// line of stdin, never a flag (flags show in ps and shell history).
func userCmd(ctx context.Context, args []string, stdin io.Reader) error {
	if len(args) == 0 || args[0] != "add" {
		return errors.New("user: the only action is add (hubd user add --org SLUG --username NAME --role ROLE)")
	}
	fs := flag.NewFlagSet("user add", flag.ExitOnError)
	var c common
	c.register(fs)
	orgSlug := fs.String("org", "", "organization Slug (created if missing)")
	username := fs.String("username", "", "Username (the User is created if the Username is new)")
	role := fs.String("role", "", "the membership's role: admin, manager, member, viewer or guest")
	_ = fs.Parse(args[1:])
	if *orgSlug == "" || *username == "" || *role == "" {
		return errors.New("user add: --org, --username and --role are required")
	}
	if !auth.Role(*role).Valid() {
		return fmt.Errorf("user add: --role must be %s", auth.RoleNames)
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("user add: reading the password from stdin: %w", err)
	}
	pw := strings.TrimRight(line, "\r\n")
	if pw == "" {
		return errors.New("user add: no password: write it as the first line of stdin")
	}
	if len([]rune(pw)) < password.MinLength {
		return fmt.Errorf("user add: the password must have at least %d characters", password.MinLength)
	}
	a, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	p, err := a.Orgs.EnsureMembership(ctx, *orgSlug, *username, auth.Role(*role))
	if err != nil {
		return err
	}
	if err := oidcprovider.SetPassword(ctx, a.Store, p.UserID, pw); err != nil {
		return err
	}
	fmt.Println(p.UserID)
	return nil
}
