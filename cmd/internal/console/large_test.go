package console

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/mutex"
)

// TestLargeTreeStaysBounded loads a tree of some 4,000 nodes with 600
// locks and a 250-member group: the overview and a recipe's page render
// at most Rows rows each and say so, the API has everything, and a change
// is classified alone (no second classification of the whole tree), which
// is what keeps a 100k-node tree responsive.
func TestLargeTreeStaysBounded(t *testing.T) {
	t.Parallel()
	cs := namespace(t, 2)
	ctx := testkit.Ctx(t)
	const locks, members, plain = 600, 250, 3000
	var ops []framework.Op
	flush := func() {
		if _, err := cs[0].Multi(ctx, ops...); err != nil {
			t.Fatal(err)
		}
		ops = ops[:0]
	}
	add := func(op framework.Op) {
		if ops = append(ops, op); len(ops) == 200 {
			flush()
		}
	}
	for _, p := range []string{"/big", "/big/locks", "/big/group", "/big/plain"} {
		add(framework.CreateOp(p, nil, framework.Persistent))
	}
	for i := 0; i < locks; i++ {
		dir := fmt.Sprintf("/big/locks/l%04d", i)
		add(framework.CreateOp(dir, nil, framework.Persistent))
		add(framework.CreateOp(fmt.Sprintf("%s/_c_%08x-0000-4000-8000-%012x-lock-0000000000", dir, i, i), []byte("10.0.0.1"), framework.Ephemeral))
	}
	for i := 0; i < members; i++ {
		add(framework.CreateOp(fmt.Sprintf("/big/group/m%04d", i), []byte("payload"), framework.Ephemeral))
	}
	for i := 0; i < plain; i++ {
		add(framework.CreateOp(fmt.Sprintf("/big/plain/p%05d", i), nil, framework.Persistent))
	}
	flush()
	s := serve(t, cs[1], addr, Options{Rows: 100})

	var recipes []Recipe
	s.get(t, "/api/recipes", false, &recipes)
	if len(recipes) != locks+1 {
		t.Fatalf("the API lists %d recipes, want %d", len(recipes), locks+1)
	}
	body := getPage(t, s, "/?token="+s.token)
	if n := strings.Count(body, "<tr data-path="); n != 100 {
		t.Errorf("the overview has %d rows, want 100", n)
	}
	if !strings.Contains(body, fmt.Sprintf("showing the first 100 of %d", locks+1)) {
		t.Errorf("the overview does not say it is cut")
	}
	body = getPage(t, s, "/r/big/group?token="+s.token)
	if n := strings.Count(body, `<tr data-id="m`); n != 100 || !strings.Contains(body, "Lists are cut at 100 rows") {
		t.Errorf("the group's page has %d member rows (want 100) or does not say it is cut", n)
	}
	var d Detail
	s.get(t, "/api/recipes/big/group", false, &d)
	if len(d.Members) != members || d.Truncated {
		t.Errorf("the API's group has %d members (truncated %v), want all %d", len(d.Members), d.Truncated, members)
	}

	// One more waiter on one lock: classified alone.
	before := s.con.model.rescans.Load()
	m := mutex.New(cs[0], "/big/locks/l0005")
	ok, err := m.TryAcquire(ctx)
	if err != nil || ok {
		t.Fatalf("TryAcquire behind the fake holder: %v %v", ok, err)
	}
	// TryAcquire left no node: acquire in the background to leave one.
	done := make(chan error, 1)
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { done <- m.Acquire(actx) }()
	testkit.Eventually(t, "the console shows the waiter", func() bool {
		var d Detail
		return s.get(t, "/api/recipes/big/locks/l0005", false, &d) == http.StatusOK && len(d.Locks) == 1 && len(d.Locks[0].Waiters) == 1
	})
	if after := s.con.model.rescans.Load(); after != before {
		t.Errorf("a change caused %d classifications of the whole tree", after-before)
	}
	cancel()
	<-done
}

func getPage(t *testing.T, s *served, path string) string {
	t.Helper()
	resp, err := s.srv.Client().Get(s.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, body)
	}
	return body
}
