package framework

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gocurator/curator/internal/zkpath"
)

// ErrCloseView is returned by Close on a namespace view (see
// WithNamespace): the session belongs to the client the view came from,
// and only that client's Close ends it. The view, like the client, stays
// usable until then.
var ErrCloseView = errors.New("curator: Close on a namespace view; close the client it came from")

// WithNamespace returns a view of c in namespace ns, Curator's
// usingNamespace: a *Client whose paths go under ns instead of c's
// namespace, and that shares everything else with c. It shares the
// connection and session (its ephemeral nodes are c's, and go when c
// closes), the state listeners (Listen on either hears every state), the
// retry policy, ACL provider, credentials and the other options of
// Connect, Guard and Done. So several primitives of several applications
// run on one session, each in its own namespace.
//
// ns replaces c's namespace rather than nesting in it, as in Curator; the
// chroot of the connect string stays. ns is written as for the
// WithNamespace option: "app", "/app" and "app/locks" are valid, "" and
// "/" mean no namespace; anything else that is not a valid path once a
// leading slash is added returns an error wrapping ErrInvalidPath. The
// namespace node is created lazily, as a container, by the first create
// that needs it. WithNamespace does no I/O; a view of a closed client
// returns ErrClosed from its calls, as the client does.
//
// Namespace, watch event paths (one-shot watches, Watch, persistent and
// recursive ones), created paths and Multi results are the view's: its
// prefix is stripped. Close on a view is refused with ErrCloseView and
// changes nothing. A nil c returns nil and ErrNilClient.
func (c *Client) WithNamespace(ns string) (*Client, error) {
	if c == nil {
		return nil, ErrNilClient
	}
	p := ns
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if p == "/" {
		p = ""
	} else if why := zkpath.Problem(p); why != "" {
		return nil, fmt.Errorf("%w: namespace %q: %s", ErrInvalidPath, ns, why)
	}
	return &Client{core: c.core, prefix: c.chroot + p, namespace: p, view: true}, nil
}

// IsView reports whether c is a namespace view made by WithNamespace,
// whose Close is refused.
func (c *Client) IsView() bool { return c != nil && c.view }
