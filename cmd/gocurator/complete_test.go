package main

import (
	"strings"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
)

// Tab completes a PATH from the server's nodes, not from local file names.
func TestCompletePath(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	for _, p := range []string{"/locks", "/locks/orders", "/locks/other", "/logs", "/config"} {
		if _, err := e.client.Create(ctx, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string // the candidates, then cobra's directive line
	}{
		{[]string{"locks", "ls", "/lo"}, "/locks\n/logs\n:6"},
		{[]string{"exec", "/locks/o"}, "/locks/orders\n/locks/other\n:6"},
		{[]string{"revoke", "/nothing/here/"}, ":4"},
		{[]string{"orphans", "lo"}, "/\n:6"},
	} {
		r := e.run(append([]string{"__complete"}, tc.args...)...)
		if got := strings.TrimSpace(r.stdout); r.code != 0 || got != tc.want {
			t.Errorf("complete %v: exit %d, got %q, want %q", tc.args, r.code, got, tc.want)
		}
	}
}
