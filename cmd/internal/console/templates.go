package console

import (
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/url"
	"strings"
	"time"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

func staticFS() fs.FS {
	sub, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic(err) // the embedded tree has it: a build error, not a run's
	}
	return sub
}

func parseTemplates() (*template.Template, error) {
	t, err := template.New("console").Funcs(template.FuncMap{
		"age":      inspect.FormatAge,
		"ageOf":    func(t time.Time, now time.Time) float64 { return ageSeconds(t, now) },
		"kindNoun": kindNoun,
		"href":     recipeHref,
		"base":     func(p string) string { return p[strings.LastIndexByte(p, '/')+1:] },
		"clock":    func(t time.Time) string { return t.Local().Format("15:04:05") },
		"isLock":   isLockKind,
		"isLatch":  func(k string) bool { return k == inspect.KindLatch },
		"clientOf": clientNoun,
		"add":      func(a, b int) int { return a + b },
		"sizeNoun": sizeNoun,
		"join":     framework.JoinPath,
		"pretty":   prettyOf,
		"prow": func(p inspect.Participant, state string, latch bool, i int, actions bool) participantRow {
			label := state
			if latch && state == "holder" {
				label = "leader"
			} else if latch {
				label = "candidate"
			}
			return participantRow{P: p, State: state, Label: label, N: i + 1, Actions: actions}
		},
	}).ParseFS(templateFiles, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("console: templates: %w", err)
	}
	return t, nil
}

// recipeHref is the URL of the page of the recipe at p.
func recipeHref(p string) string {
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/r/" + strings.Join(segs, "/")
}

// clientNoun names a node's client family. Curator and gocurator write the
// same protected names and data: ZooKeeper shows nothing that tells them
// apart.
func clientNoun(c string) string {
	switch c {
	case inspect.ClientCurator:
		return "Curator/Go"
	case inspect.ClientGoZookeeper:
		return "go-zookeeper"
	case inspect.ClientKazoo:
		return "kazoo"
	}
	return c
}

// kindNoun names a kind of recipe, as the gocurator command does.
func kindNoun(kind string) string {
	switch kind {
	case inspect.KindMutex:
		return "mutex"
	case inspect.KindReadWrite:
		return "read/write lock"
	case inspect.KindSemaphoreV1:
		return "semaphore (V1)"
	case inspect.KindSemaphoreV2:
		return "semaphore (V2)"
	case inspect.KindLatch:
		return "leader election"
	case inspect.KindGroup:
		return "group"
	case inspect.KindService:
		return "service"
	case inspect.KindServices:
		return "service discovery"
	case inspect.KindCounter:
		return "counter"
	case inspect.KindDoubleBarrier:
		return "double barrier"
	case inspect.KindQueue:
		return "queue"
	case inspect.KindQueueLock:
		return "queue lock path"
	case inspect.KindSimpleQueue:
		return "simple queue"
	}
	return kind
}

// participantRow is one row of a lock's table.
type participantRow struct {
	P       inspect.Participant
	State   string // holder, waiter
	Label   string // the state in words: an election's leader and candidates
	N       int    // 1-based place in the queue
	Actions bool
}

// prettyOf is a member's or an instance's payload, pretty-printed.
func prettyOf(v any) string {
	switch v := v.(type) {
	case Member:
		return v.pretty
	case Instance:
		return v.pretty
	}
	return ""
}

// sizeNoun names what Recipe.Size counts for a kind, n of them.
func sizeNoun(kind string, n int) string {
	noun := "node"
	switch kind {
	case inspect.KindGroup, inspect.KindDoubleBarrier:
		noun = "member"
	case inspect.KindService:
		noun = "instance"
	case inspect.KindServices:
		noun = "service"
	case inspect.KindCounter:
		noun = "writer"
	case inspect.KindQueue, inspect.KindQueueLock, inspect.KindSimpleQueue:
		noun = "item"
	}
	if n != 1 {
		noun += "s"
	}
	return noun
}
