package framework

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// OpType is the kind of a transaction's operation (Curator's
// OperationType).
type OpType int

const (
	OpCreate OpType = iota + 1
	OpDelete
	OpSet
	OpCheck
)

// String returns Curator's name of the type: CREATE, DELETE, SET_DATA,
// CHECK.
func (t OpType) String() string {
	switch t {
	case OpCreate:
		return "CREATE"
	case OpDelete:
		return "DELETE"
	case OpSet:
		return "SET_DATA"
	case OpCheck:
		return "CHECK"
	}
	return fmt.Sprintf("OpType(%d)", int(t))
}

// OpResult is the result of one operation of a transaction, Curator's
// CuratorTransactionResult.
type OpResult struct {
	// Type is the operation's kind.
	Type OpType
	// Path is the path the operation named (Curator's forPath).
	Path string
	// Created is the path the server gave a created node (with its
	// sequence number), without the namespace; "" for the other kinds
	// (Curator's resultPath).
	Created string
	// Stat is the node's Stat after a set; nil for the other kinds
	// (Curator's resultStat).
	Stat *zk.Stat
	// Err is nil when the transaction was applied. When it failed, the
	// failing operation's Err is the server's error for it (zk.ErrNoNode,
	// zk.ErrBadVersion, ...) and every other operation's wraps
	// ErrRolledBack.
	Err error
}

// ErrRolledBack is the error of an operation of a failed transaction that
// was not the cause of the failure: the operations before the failing one
// were undone, the ones after it never checked.
var ErrRolledBack = errors.New("curator: rolled back with its transaction")

// TransactionError is the error of a transaction the server refused: which
// operation failed, why, and every operation's result. It unwraps to the
// failing operation's error, so errors.Is(err, zk.ErrNoNode) works.
type TransactionError struct {
	// Index is the position of the failing operation in the transaction.
	Index int
	// Results holds one result per operation, in order.
	Results []OpResult
}

// Error names the failing operation and its error.
func (e *TransactionError) Error() string {
	r := e.Results[e.Index]
	return fmt.Sprintf("multi: op %d (%s %s): %v", e.Index, r.Type, r.Path, r.Err)
}

// Unwrap returns the failing operation's error.
func (e *TransactionError) Unwrap() error { return e.Results[e.Index].Err }

// Transaction runs ops atomically, as Multi does, and returns one typed
// result per operation (Curator's transaction().forOperations()). When the
// server refuses the transaction, nothing is applied and the error is a
// *TransactionError holding every operation's result (also returned), so
// the caller can tell which operation failed and why. Other errors (bad
// input, ctx, the retry policy giving up) come with no results; after
// ctx's end, the transaction may still be applied, as Multi says.
func (c *Client) Transaction(ctx context.Context, ops ...Op) ([]OpResult, error) {
	if c == nil {
		return nil, ErrNilClient
	}
	res, err := c.multi(ctx, ops)
	var te *TransactionError
	if errors.As(err, &te) {
		return te.Results, err
	}
	if err != nil {
		return nil, err
	}
	return results(ops, res), nil
}

// results types the server's responses to ops (namespace stripped).
func results(ops []Op, res []zk.MultiResponse) []OpResult {
	out := make([]OpResult, len(ops))
	for i, o := range ops {
		out[i] = OpResult{Type: o.typ(), Path: o.path}
		if i >= len(res) {
			continue
		}
		switch o.kind {
		case opCreate:
			out[i].Created = res[i].String
		case opSet:
			out[i].Stat = res[i].Stat
		}
	}
	return out
}

// transactionError makes the error of a transaction the server refused
// with err, from its responses: the failing operation is the first one
// whose response is an error (ZooKeeper answers the ones before it with
// OK and the ones after it with "runtime inconsistency").
func transactionError(ops []Op, res []zk.MultiResponse, err error) *TransactionError {
	te := &TransactionError{Index: -1, Results: make([]OpResult, len(ops))}
	for i, o := range ops {
		te.Results[i] = OpResult{Type: o.typ(), Path: o.path}
		var opErr error
		if i < len(res) {
			opErr = res[i].Error
		}
		if te.Index < 0 && opErr != nil {
			te.Index = i
			te.Results[i].Err = opErr
			continue
		}
		te.Results[i].Err = ErrRolledBack
	}
	if te.Index < 0 {
		// No response named the failure: blame the whole, on op 0.
		te.Index = 0
		te.Results[0].Err = err
	}
	return te
}

// typ returns the operation's OpType.
func (o Op) typ() OpType {
	switch o.kind {
	case opCreate:
		return OpCreate
	case opDelete:
		return OpDelete
	case opSet:
		return OpSet
	case opCheck:
		return OpCheck
	}
	return 0
}
