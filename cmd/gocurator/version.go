package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// modulePath is the library module, whose version the command reports
// when it was built as a dependency of another main module.
const modulePath = "github.com/gocurator/curator"

// version is the command's version from its build info: the module version
// go install recorded (v1.2.3, or a pseudo-version), else, for a build in
// a work tree, "(devel)" with the commit and whether the tree was modified.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (no build info)"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		for _, d := range bi.Deps {
			if d.Path == modulePath && d.Version != "" && d.Version != "(devel)" {
				v = d.Version
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if v == "(devel)" && rev != "" {
		v += fmt.Sprintf(" (commit %.12s%s)", rev, modified)
	}
	return v + ", " + bi.GoVersion
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print gocurator's version (also --version)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(a.stdout, "gocurator "+version())
			return err
		},
	}
}
