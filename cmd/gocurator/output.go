package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gocurator/curator/cmd/internal/inspect"
)

// writeJSON prints v as one JSON document (indented unless compact).
func writeJSON(w io.Writer, v any, compact bool) error {
	enc := json.NewEncoder(w)
	if !compact {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

// locksDoc is the --json document of locks ls and locks watch.
type locksDoc struct {
	Locks []inspect.Lock `json:"locks"`
	// Sessions is "complete" when every server answered cons, else
	// "unknown" (connected is then "unknown" for sessions not listed).
	Sessions string `json:"sessions"`
	// Time is when the view was taken (locks watch only).
	Time *time.Time `json:"time,omitempty"`
}

// sessionsState is the "sessions" field of the JSON documents.
func sessionsState(s *inspect.Sessions) string {
	if !s.Complete {
		return "unknown"
	}
	return "complete"
}

func newLocksDoc(locks []inspect.Lock, s *inspect.Sessions) locksDoc {
	if locks == nil {
		locks = []inspect.Lock{}
	}
	return locksDoc{Locks: locks, Sessions: sessionsState(s)}
}

// writeLocks prints one block per lock: a heading, then holders and
// waiters in order.
func writeLocks(w io.Writer, locks []inspect.Lock) {
	for i, l := range locks {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s  %s%s  %s, %s%s\n", l.Path, l.Kind, maxNote(l),
			plural(len(l.Holders), "holder"), plural(len(l.Waiters), "waiter"), v1Note(l))
		writeParticipants(w, l.Holders, l.Waiters)
	}
}

func maxNote(l inspect.Lock) string {
	if l.Max == 0 {
		if l.Kind == inspect.KindSemaphoreV2 {
			return " (max unknown)"
		}
		return ""
	}
	if l.MaxSource != "" {
		return fmt.Sprintf(" (max %d from %s)", l.Max, l.MaxSource)
	}
	return fmt.Sprintf(" (max %d)", l.Max)
}

// v1Note says that a mutex layout with waiters may be a V1 semaphore,
// whose "waiters" then hold leases: the layouts are the same and record
// no maximum.
func v1Note(l inspect.Lock) string {
	if l.Kind != inspect.KindMutex || l.Max != 0 || len(l.Waiters) == 0 {
		return ""
	}
	return "  (mutex or V1 semaphore: pass --max to semaphore leases)"
}

// writeParticipants prints holders then waiters as one table.
func writeParticipants(w io.Writer, holders, waiters []inspect.Participant) {
	if len(holders)+len(waiters) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  #\tSTATE\tROLE\tNODE\tCLIENT\tSESSION\tHOST\tAGE\tTOKEN\tCONNECTED")
	n := 0
	row := func(state string, p inspect.Participant) {
		n++
		host := p.Host
		if p.Revoking {
			host = "(revocation asked)"
		}
		if host == "" {
			host = "-"
		}
		age := inspect.FormatAge(p.AgeSeconds)
		if p.HeldSince != nil {
			age += " (held " + inspect.FormatAge(p.HeldSeconds) + ")"
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", n, state, p.Role, p.Name(), p.Client,
			p.Session, host, age, p.Token, p.Connected)
	}
	for _, p := range holders {
		row("holder", p)
	}
	for _, p := range waiters {
		row("waiter", p)
	}
	_ = tw.Flush()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// warnSessions prints, once, why connected says unknown.
func warnSessions(w io.Writer, s *inspect.Sessions) {
	if s.Complete {
		return
	}
	fmt.Fprintf(w, "gocurator: note: connected is \"unknown\" for some sessions: %s\n", strings.Join(s.Problems, "; "))
}
