package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// guardGroups makes every command that only groups others (locks,
// semaphore, ...) refuse an argument it does not know, with exit 2 and the
// nearest command, instead of cobra's default for a group, which prints its
// help and exits 0: a cron line with a mistyped subcommand would never run
// its job and nothing would notice.
func guardGroups(root *cobra.Command) {
	for _, c := range root.Commands() {
		guardGroup(root, c)
		if c.Name() == "help" && c.Run != nil {
			guardHelp(root, c)
		}
	}
}

// guardHelp makes help for a command that does not exist exit 2, as
// running it would (cobra prints the root's usage and exits 0).
func guardHelp(root, help *cobra.Command) {
	show := help.Run
	help.Run = nil
	help.RunE = func(c *cobra.Command, args []string) error {
		cmd, rest, err := root.Find(args)
		if err != nil || cmd == nil {
			return usageError{fmt.Errorf("no help topic %q", strings.Join(args, " "))}
		}
		if len(rest) > 0 {
			msg := fmt.Sprintf("no help topic %q", strings.Join(args, " "))
			if near := nearest(root, cmd, rest[0]); near != "" {
				msg += fmt.Sprintf("; did you mean %q?", near)
			}
			return usageError{errors.New(msg)}
		}
		show(c, args)
		return nil
	}
}

func guardGroup(root, c *cobra.Command) {
	if !c.HasSubCommands() {
		return
	}
	for _, sub := range c.Commands() {
		guardGroup(root, sub)
	}
	if c.Runnable() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usageError{fmt.Errorf("%s needs a subcommand: %s", cmd.CommandPath(), strings.Join(subNames(cmd), ", "))}
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if near := nearest(root, cmd, args[0]); near != "" {
			msg += fmt.Sprintf("; did you mean %q?", near)
		} else {
			msg += "; its subcommands: " + strings.Join(subNames(cmd), ", ")
		}
		return usageError{errors.New(msg)}
	}
}

// readVerbs are the names people type for "show me": each group has one
// of them (locks ls, leader show, atomic get), and a mistyped one means
// that one, not another group's command of the typed name.
var readVerbs = []string{"ls", "list", "show", "get", "cat", "status", "info", "describe", "view", "dump"}

// nearest names the command the user most likely meant by typing name
// under group: a subcommand of group spelt alike (locks list: locks ls),
// else the group's own read verb for another read verb (leader ls: leader
// show), else a command of that name in a group whose description covers
// the mistyped one (leader exec: elect exec; semaphore ls: locks ls), else
// a top-level command (tree ls: ls; lock ls: locks). Never an unrelated
// group's command: group ls is no answer to leader ls.
func nearest(root, group *cobra.Command, name string) string {
	group.SuggestionsMinimumDistance = 2
	if s := group.SuggestionsFor(name); len(s) > 0 {
		return group.CommandPath() + " " + s[0]
	}
	if slices.Contains(readVerbs, name) {
		for _, sub := range group.Commands() {
			if sub.IsAvailableCommand() && slices.Contains(readVerbs, sub.Name()) {
				return sub.CommandPath()
			}
		}
	}
	for _, g := range root.Commands() {
		if g == group || !g.IsAvailableCommand() || !strings.Contains(g.Short, group.Name()) {
			continue
		}
		for _, sub := range g.Commands() {
			if sub.IsAvailableCommand() && (sub.Name() == name || sub.HasAlias(name)) {
				return sub.CommandPath()
			}
		}
	}
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() && (c.Name() == name || c.HasAlias(name)) {
			return c.CommandPath()
		}
	}
	root.SuggestionsMinimumDistance = 2
	if s := root.SuggestionsFor(name); len(s) > 0 {
		return root.CommandPath() + " " + s[0]
	}
	return ""
}

// subNames lists a group's subcommands.
func subNames(c *cobra.Command) []string {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	slices.Sort(names)
	return names
}
