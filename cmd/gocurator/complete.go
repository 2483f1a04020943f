package main

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gocurator/curator/framework"
)

// completeTimeout bounds what a shell's Tab waits for the server.
const completeTimeout = 2 * time.Second

// completePaths makes every command whose first argument is a ZooKeeper
// PATH or NODE complete it from the server at --zk (the children of the
// path typed so far), not from local file names.
func (a *app) completePaths(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.ValidArgsFunction == nil && (strings.Contains(c.Use, " PATH") || strings.Contains(c.Use, " NODE")) {
			c.ValidArgsFunction = a.completePath
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completePath lists the nodes under the last "/" of toComplete whose
// names start with what follows it. After the path, exec's CMD completes
// as the shell would.
func (a *app) completePath(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	const none = cobra.ShellCompDirectiveNoFileComp
	if len(args) > 0 {
		if cmd.ArgsLenAtDash() >= 0 {
			return nil, cobra.ShellCompDirectiveDefault // exec's CMD and its arguments
		}
		return nil, none
	}
	if !strings.HasPrefix(toComplete, "/") {
		return []string{"/"}, none | cobra.ShellCompDirectiveNoSpace
	}
	i := strings.LastIndexByte(toComplete, '/')
	dir, prefix := toComplete[:i], toComplete[i+1:]
	if dir == "" {
		dir = "/"
	}
	a.timeout = min(a.timeout, completeTimeout)
	ctx, cancel := context.WithTimeout(cmd.Context(), a.timeout)
	defer cancel()
	c, err := a.connect(ctx)
	if err != nil {
		return nil, none
	}
	defer c.Close()
	names, _, err := c.Children(ctx, dir)
	if err != nil {
		return nil, none
	}
	slices.Sort(names)
	var out []string
	for _, n := range names {
		if p := framework.JoinPath(dir, n); strings.HasPrefix(n, prefix) && p != "/zookeeper" {
			out = append(out, p)
		}
	}
	return out, none | cobra.ShellCompDirectiveNoSpace
}
