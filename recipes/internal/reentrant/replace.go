package reentrant

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
)

// replacement is a cohort's move from its node to the next one when the
// node goes with local waiters (a streak's end, a revocation): the next
// node's create and the old node's delete in one transaction, made as the
// first create of the cohort's next acquire (lockhook.Hooks.Create). The
// process so joins the ZooKeeper queue, behind every process waiting, in
// the instant it leaves the head of it, and the holder elsewhere that
// watches the old node is granted one round trip after the release: a
// create and then a delete took two, and a delete before the create let
// the process hold again ahead of those waiting (see cohort.release).
type replacement struct {
	c       *framework.Client
	old     string      // the node given up; its hold is detached
	queued  func()      // the cohort's: the next node is queued, old gone
	deleted atomic.Bool // the transaction deleted old
}

// create is the cohort's next acquire's first create: the next node, a
// protected ephemeral sequential node like the loop's (Curator's name and
// mode, so a Java InterProcessMutex sees an ordinary participant), made in
// one transaction with old's delete. It returns the node, or "" when the
// transaction was not applied (old went already, with its session or
// by the release's own delete after its ctx ended): the loop then creates
// as usual, and the release deletes old after that create. A transaction
// whose reply was lost is settled by its protected id (settle).
func (r *replacement) create(ctx context.Context, path string, data []byte, mode framework.Mode) (string, error) {
	if mode != framework.EphemeralSequential {
		return "", nil // not the lock node this was made for: the loop's create
	}
	dir, name := framework.SplitPath(path)
	prefix := framework.ProtectedPrefix + uuid.NewString() + "-"
	sess := r.c.Session()
	// Waited for to its reply (or the retry policy's end) whatever ctx
	// does: a transaction abandoned on its way could still be applied,
	// and its node would then wait in the queue for nobody. A node made
	// for a ctx that has ended is deleted by the loop, which fails on
	// that ctx as soon as it uses it.
	res, err := r.c.Multi(context.WithoutCancel(ctx),
		framework.CreateOp(framework.JoinPath(dir, prefix+name), data, mode),
		framework.DeleteOp(r.old, -1))
	var node string
	if err == nil {
		node = res[0].String
	} else if node, err = r.settle(ctx, sess, dir, prefix); err != nil || node == "" {
		return "", err
	}
	r.deleted.Store(true)
	r.queued()
	return node, nil
}

// settle says whether the transaction, which failed, was applied all the
// same: its reply lost with the connection (a retry is then refused, old
// being gone), or refused after a retry. ZooKeeper answers a session's
// requests in order, so a listing made after the failure shows the node
// if the transaction made it, by its protected id: the recovery of the
// protected create (docs/design.md, wire-format.md). It looks until it
// knows, while the client is open and sess, the session the transaction
// was sent in, lives (its end takes the node with it): the node if the
// transaction made it, "" if not; framework.ErrClosed after Close.
func (r *replacement) settle(ctx context.Context, sess *framework.Session, dir, prefix string) (string, error) {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() {
		select {
		case <-sess.Done():
		case <-r.c.Done():
		case <-sctx.Done():
		}
		cancel()
	}()
	log := r.c.Logger().Named("lock")
	pause := 10 * time.Millisecond
	for {
		node, err := r.find(sctx, sess, dir, prefix)
		if err == nil {
			if node != "" {
				log.Info("local hand-over: transaction's node found by its protected id", zap.String("node", node))
			}
			return node, nil
		}
		select {
		case <-r.c.Done():
			return "", framework.ErrClosed
		case <-sess.Done():
			return "", nil // the node, if made, went with its session
		default:
		}
		log.Debug("local hand-over: settling the transaction", zap.String("dir", dir), zap.Error(err))
		_ = r.c.Pause(sctx, pause) // ends early with sctx: the select above says why
		pause = min(2*pause, time.Second)
	}
}

// find returns the node of dir named with prefix if it lives in sess, ""
// if there is none. One of an ended session (its end not yet applied) is
// deleted, not taken: it is not ours to wait with.
func (r *replacement) find(ctx context.Context, sess *framework.Session, dir, prefix string) (string, error) {
	kids, _, err := r.c.Children(ctx, dir)
	if errors.Is(err, zk.ErrNoNode) {
		return "", nil // the directory went, and every node in it
	}
	if err != nil {
		return "", err
	}
	for _, k := range kids {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		p := framework.JoinPath(dir, k)
		st, err := r.c.Exists(ctx, p)
		switch {
		case err != nil:
			return "", err
		case st == nil:
			return "", nil
		case st.EphemeralOwner != sess.ID():
			return "", r.c.Delete(ctx, p, framework.Quietly())
		}
		return p, nil
	}
	return "", nil
}

// deleteRest deletes what the detached hold that r replaces leaves, once
// the next node is queued (or its acquire has ended, or ctx has): the old
// node unless the transaction deleted it, then also, each guaranteed (as
// the hold's Release: past ctx the delete goes on in the background). A
// delete of a node gone already is no error.
func (r *replacement) deleteRest(ctx context.Context, also []string) error {
	nodes := also
	if !r.deleted.Load() {
		nodes = append([]string{r.old}, also...)
	}
	var first error
	for _, n := range nodes {
		if err := r.c.Delete(ctx, n, framework.Guaranteed(), framework.Quietly()); err != nil && first == nil {
			first = err
		}
	}
	return first
}
