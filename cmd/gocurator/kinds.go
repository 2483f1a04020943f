package main

import (
	"fmt"
	"strings"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
)

// kindNoun names a kind of recipe in a sentence.
func kindNoun(kind string) string {
	switch kind {
	case inspect.KindMutex:
		return "mutex or V1 semaphore"
	case inspect.KindReadWrite:
		return "read/write lock"
	case inspect.KindSemaphoreV1:
		return "V1 semaphore"
	case inspect.KindSemaphoreV2:
		return "V2 semaphore"
	case inspect.KindLatch:
		return "leader latch"
	case inspect.KindGroup:
		return "group"
	case inspect.KindService:
		return "registered service"
	case inspect.KindServices:
		return "service discovery base path"
	case inspect.KindCounter:
		return "atomic counter"
	case inspect.KindDoubleBarrier:
		return "double barrier"
	case inspect.KindQueue:
		return "distributed queue"
	case inspect.KindQueueLock:
		return "distributed queue's lock path"
	case inspect.KindSimpleQueue:
		return "simple distributed queue"
	case inspect.KindQueueSharder:
		return "queue sharder"
	case "":
		return "no recipe"
	}
	return kind
}

// sizeNoun names what Layout.Size counts for a kind.
func sizeNoun(kind string) string {
	switch kind {
	case inspect.KindGroup, inspect.KindDoubleBarrier:
		return "member"
	case inspect.KindService:
		return "instance"
	case inspect.KindCounter:
		return "writer node"
	case inspect.KindQueue, inspect.KindQueueLock, inspect.KindSimpleQueue:
		return "item"
	case inspect.KindQueueSharder:
		return "shard"
	}
	return "node"
}

// describeLayout is a recipe with its size: "group (2 members)".
func describeLayout(l inspect.Layout) string {
	if l.Kind == "" {
		return "no recipe"
	}
	if l.Kind == inspect.KindServices {
		return fmt.Sprintf("%s (services with instances: %d)", kindNoun(l.Kind), l.Size)
	}
	return fmt.Sprintf("%s (%s)", kindNoun(l.Kind), plural(l.Size, sizeNoun(l.Kind)))
}

// describePlace says what a path is: "a group (2 members)", "a member of
// the group at /workers", or what it holds when it is no recipe.
func describePlace(p inspect.Place, z *inspect.Znode) string {
	switch {
	case p.Part != "":
		return withArticle(fmt.Sprintf("%s of the %s at %s", p.Part, kindNoun(p.Layout.Kind), p.Layout.Path))
	case p.Layout.Kind != "":
		return withArticle(describeLayout(p.Layout))
	case z == nil:
		return "no recipe"
	case z.IsEphemeral():
		return "an ephemeral node of no recipe"
	case len(z.Children) > 0:
		return fmt.Sprintf("no recipe (children: %s)", childNames(z, 3))
	case z.NumChildren > 0:
		return fmt.Sprintf("no recipe (%d children)", z.NumChildren)
	case len(z.Data) > 0:
		return fmt.Sprintf("no recipe (a node with %s of data)", plural(len(z.Data), "byte"))
	}
	return "no recipe (an empty node)"
}

// withArticle puts "a" or "an" before a noun phrase.
func withArticle(s string) string {
	if s != "" && strings.ContainsRune("aeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

// childNames lists the first n children's names, then "...".
func childNames(z *inspect.Znode, n int) string {
	names := make([]string, 0, n+1)
	for _, c := range z.Children {
		if len(names) == n {
			names = append(names, "...")
			break
		}
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// seeCommand is the command that shows what was found at path, "" if none.
func seeCommand(p inspect.Place) string {
	l := p.Layout
	switch l.Kind {
	case inspect.KindMutex, inspect.KindReadWrite, inspect.KindSemaphoreV1, inspect.KindSemaphoreV2:
		return "gocurator locks ls " + l.Path
	case inspect.KindLatch:
		return "gocurator leader show " + l.Path
	case inspect.KindGroup:
		return "gocurator group ls " + l.Path
	case inspect.KindService:
		base, name := framework.SplitPath(l.Path)
		return fmt.Sprintf("gocurator services ls %s --base %s", name, base)
	case inspect.KindServices:
		return "gocurator services ls --base " + l.Path
	case inspect.KindCounter:
		return "gocurator atomic get " + l.Path
	case inspect.KindDoubleBarrier:
		return "gocurator barrier show " + l.Path
	case inspect.KindQueue, inspect.KindQueueLock, inspect.KindSimpleQueue:
		return "gocurator queue ls " + l.Path
	case inspect.KindQueueSharder:
		return "gocurator ls " + l.Path + " (each shard: gocurator queue ls " + l.Path + "/<shard>)"
	}
	return "gocurator ls " + l.Path
}

// wrongKind is the refusal of a command that needs want ("a group") at
// path and found something else there: exit 65, what was found, what shows
// it.
func wrongKind(path string, p inspect.Place, z *inspect.Znode, want, nothing string) error {
	msg := fmt.Sprintf("%s is %s, not %s", path, describePlace(p, z), want)
	if nothing != "" {
		msg += "; " + nothing
	}
	if see := seeCommand(p); p.Layout.Kind != "" {
		msg += " (see " + see + ")"
	}
	return exitError{code: exitLayout, msg: msg}
}

// lockPlace is the place of a lock locks ls found.
func lockPlace(l inspect.Lock) inspect.Place {
	return inspect.Place{Layout: inspect.Layout{Path: l.Path, Kind: l.Kind, Size: len(l.Holders) + len(l.Waiters), Locks: []inspect.Lock{l}}}
}
