package console

import (
	"encoding/json"
	"time"

	"github.com/gocurator/curator/cmd/internal/inspect"
)

// Recipe is one recipe path as the overview shows it: one object of GET
// /api/recipes.
type Recipe struct {
	Path string `json:"path"`
	// Kind is inspect's (mutex, read-write, semaphore-v1, semaphore-v2,
	// latch, group, service, service-discovery, counter, double-barrier,
	// queue, queue-lock, simple-queue), as the gocurator command names it.
	Kind string `json:"kind"`
	// Size counts the participants: lock, lease and latch nodes, members,
	// instances, services, writers or items (inspect.Layout.Size).
	Size int `json:"size"`
	// Holders and Waiters count a lock kind's participants.
	Holders int `json:"holders"`
	Waiters int `json:"waiters"`
	// Leader is the first holder's id (a latch participant's id, or the
	// host a lock node carries), for lock kinds.
	Leader string `json:"leader,omitempty"`
	// Value is a counter's value.
	Value *int64 `json:"value,omitempty"`
	// OldestHolderSince is the creation time of the oldest holder's node,
	// OldestHolderAgeSeconds its age (ZooKeeper records no grant time:
	// the wait counts too).
	OldestHolderSince      *time.Time `json:"oldest_holder_since,omitempty"`
	OldestHolderAgeSeconds float64    `json:"oldest_holder_age_seconds,omitempty"`
	// Warnings says what looks wrong.
	Warnings []Warning `json:"warnings,omitempty"`
}

// Kinds of warning.
const (
	// WarnHolderGone: a holder's session is connected to no server (every
	// server answered cons): it keeps the lock until the session expires.
	WarnHolderGone = "holder-session-gone"
	// WarnOrphanNode: a waiter's or member's session is connected to no
	// server: its node stays until the session expires.
	WarnOrphanNode = "orphan-node"
	// WarnGrowing: a queue's depth rose at each of its last changes.
	WarnGrowing = "queue-growing"
)

// Warning is one thing that looks wrong at a recipe.
type Warning struct {
	Kind    string `json:"kind"`
	Node    string `json:"node,omitempty"`
	Message string `json:"message"`
}

// Detail is everything the page of one recipe shows: GET
// /api/recipes/PATH.
type Detail struct {
	Recipe Recipe `json:"recipe"`
	// Locks is what gocurator locks ls --json lists for the path (lock
	// kinds): holders then waiters, in the order they are granted.
	Locks []inspect.Lock `json:"locks,omitempty"`
	// Terms are the holders (an election's leaders) seen since the
	// console started, oldest first, at most maxTerms.
	Terms []Term `json:"terms,omitempty"`
	// Members are a group's or a double barrier's member nodes.
	Members []Member `json:"members,omitempty"`
	// Instances are a service's registrations.
	Instances []Instance `json:"instances,omitempty"`
	// Services are the services under a discovery base path.
	Services []Service `json:"services,omitempty"`
	// Counter is an atomic counter's value.
	Counter *Counter `json:"counter,omitempty"`
	// Items counts a queue's items.
	Items *int `json:"items,omitempty"`
	// Truncated is set when a list was cut at its bound (the count of
	// everything is in Recipe.Size).
	Truncated bool `json:"truncated,omitempty"`
	// Sessions is "complete" when every server answered cons, else
	// "unknown", as in the gocurator command's --json documents.
	Sessions string `json:"sessions"`
	// PayloadsHidden is set when the request carried no access token:
	// payloads are left out.
	PayloadsHidden bool `json:"payloads_hidden,omitempty"`
}

// Term is one holder of a lock or leader of an election, as seen.
type Term struct {
	Node    string     `json:"node"`
	ID      string     `json:"id"`
	Session string     `json:"session"`
	Client  string     `json:"client"`
	Token   int64      `json:"token"`
	Start   time.Time  `json:"start"`
	End     *time.Time `json:"end,omitempty"`
}

// Member is a group's member, with the fields of gocurator group ls
// --json.
type Member struct {
	ID           string    `json:"id"`
	Payload      string    `json:"payload"`
	PayloadBytes []byte    `json:"payloadBytes,omitempty"`
	Session      string    `json:"session,omitempty"`
	Connected    string    `json:"connected,omitempty"`
	Created      time.Time `json:"created"`
	AgeSeconds   float64   `json:"age_seconds"`

	pretty string
	owner  int64
}

// Instance is a service's registration, with the fields of gocurator
// services ls --json.
type Instance struct {
	Node       string          `json:"node"`
	ID         string          `json:"id"`
	Address    string          `json:"address,omitempty"`
	Port       *int            `json:"port,omitempty"`
	Session    string          `json:"session,omitempty"`
	Connected  string          `json:"connected,omitempty"`
	Created    time.Time       `json:"created"`
	AgeSeconds float64         `json:"age_seconds"`
	Instance   json.RawMessage `json:"instance,omitempty"`

	pretty string
	owner  int64
}

// Service is a service under a discovery base path.
type Service struct {
	Name      string `json:"name"`
	Instances int    `json:"instances"`
}

// Counter is an atomic counter's value, as gocurator atomic get --json
// reads it.
type Counter struct {
	Value   int64  `json:"value"`
	Type    string `json:"type"` // long, int (by the data's length)
	Version int32  `json:"version"`
	Bytes   int    `json:"bytes"`
}
