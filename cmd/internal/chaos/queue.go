package chaos

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/queue"
)

// The queue workloads' violations.
const (
	// ViolationQueue: in the lock-safety queue with fenced consumption, an
	// item consumed twice (two done markers for one id), an acknowledged
	// put never consumed, a marker for an id never put, or a queue not
	// drained at the end.
	ViolationQueue = "queue"
	// ViolationSimpleQueue: the simple queue handed out an item never
	// offered.
	ViolationSimpleQueue = "simple-queue"
	// ViolationSimpleTwice: the simple queue, at most once, handed one
	// item to two takers.
	ViolationSimpleTwice = "simple-queue-twice"
)

// QueuePaths are one workload's queue nodes.
type QueuePaths struct {
	Items  string // the DistributedQueue (lock-safety mode)
	Locks  string // its lock path
	Done   string // the done markers, one bucket node per markerBucket ids
	Simple string // the SimpleDistributedQueue
}

// QueuePathsOf returns the queue nodes of workload.
func QueuePathsOf(workload string) QueuePaths {
	base := Root + "/" + workload
	return QueuePaths{Items: base + "/queue/items", Locks: base + "/queue/locks", Done: base + "/queue/done",
		Simple: base + "/simple"}
}

// markerBucket is how many ids share a bucket of done markers: one
// directory of a long run's markers would outgrow jute.maxbuffer.
const markerBucket = 1000

// itemID is the n-th item id of a producer of workload ("standard-q42");
// kind is 'q' for the queue, 's' for the simple queue.
func itemID(workload string, kind byte, n int) string {
	return fmt.Sprintf("%s-%c%d", workload, kind, n)
}

// bucketOf is the done-marker bucket of id, or false for an id this
// workload did not make.
func bucketOf(id string) (string, bool) {
	i := strings.LastIndexByte(id, '-')
	if i < 0 || len(id) < i+3 || (id[i+1] != 'q' && id[i+1] != 's') {
		return "", false
	}
	n, err := strconv.Atoi(id[i+2:])
	if err != nil || n < 0 {
		return "", false
	}
	return fmt.Sprintf("b%d", n/markerBucket), true
}

// markerID is the id of a done marker's name ("<id>-<10-digit sequence>").
func markerID(name string) (string, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || len(name)-i-1 != 10 {
		return "", false
	}
	return name[:i], true
}

// ConsumeFenced consumes workload's lock-safety queue on c until ctx ends:
// each item is consumed by one transaction that creates its done marker
// (a sequential node "<Done>/<bucket>/<id>-", data "<consumer> <item
// node>") and removes the item (Item.RemoveOps), so the marker exists if
// and only if the item was consumed, once per consumption. errs, when not
// nil, hears what the consumer handles itself (lost items, fenced
// writes). The chaos run's in-process consumers and its consumer processes
// (package qconsume) run it.
func ConsumeFenced(ctx context.Context, c *framework.Client, workload, consumer string, errs func(error)) error {
	p := QueuePathsOf(workload)
	opts := []queue.Option{queue.WithLockPath(p.Locks)}
	if errs != nil {
		opts = append(opts, queue.WithErrorHandler(errs))
	}
	q := queue.New(c, p.Items, opts...)
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = q.Close(cctx)
	}()
	return q.Consume(ctx, func(ctx context.Context, it queue.Item) error {
		if !it.Fenced() {
			return fmt.Errorf("item %s is not fenced", it.Name)
		}
		id := string(it.Data)
		bucket, ok := bucketOf(id)
		if !ok {
			return fmt.Errorf("item %s: id %q not the workload's", it.Name, id)
		}
		ops := append([]framework.Op{framework.CreateOp(framework.JoinPath(framework.JoinPath(p.Done, bucket), id+"-"),
			[]byte(consumer+" "+it.Name), framework.PersistentSequential)}, it.RemoveOps()...)
		_, err := c.Multi(ctx, ops...)
		return err
	})
}
