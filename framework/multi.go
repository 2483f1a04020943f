package framework

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/telemetry/clienttel"
	"github.com/gocurator/curator/internal/zkwire"
)

// Op is one operation of a Multi transaction. Build it with CreateOp,
// DeleteOp, SetOp or CheckOp.
type Op struct {
	kind    int
	path    string
	data    []byte
	mode    Mode
	acl     []zk.ACL
	version int32
	cOpts   []CreateOption
	sOpts   []SetOption
}

const (
	opCreate = iota
	opDelete
	opSet
	opCheck
)

// CreateOp creates path with data in mode (persistent, ephemeral or
// sequential; containers and TTL nodes cannot be made in a transaction).
// nil data means the client's default data. Of the create options, only
// Compressed, Uncompressed and WithACL apply in a transaction; the others
// make the transaction fail with ErrInvalidOption, unsent.
func CreateOp(path string, data []byte, mode Mode, opts ...CreateOption) Op {
	return Op{kind: opCreate, path: path, data: data, mode: mode, cOpts: opts}
}

// DeleteOp deletes path if its version is version (-1: any).
func DeleteOp(path string, version int32) Op {
	return Op{kind: opDelete, path: path, version: version}
}

// SetOp sets path's data if its version is version (-1: any). Of the set
// options, Compressed and Uncompressed apply in a transaction; Idempotent
// makes the transaction fail with ErrInvalidOption, unsent.
func SetOp(path string, data []byte, version int32, opts ...SetOption) Op {
	return Op{kind: opSet, path: path, data: data, version: version, sOpts: opts}
}

// CheckOp fails the transaction unless path exists with version (-1: any
// version, so it checks only that the node exists).
func CheckOp(path string, version int32) Op {
	return Op{kind: opCheck, path: path, version: version}
}

// Path returns the path the operation is about.
func (o Op) Path() string { return o.path }

// Multi runs ops atomically: all are applied or none, and returns the
// server's responses, one per operation (created paths without namespace).
// When the server refuses the transaction, the error is a
// *TransactionError: it unwraps to the failing operation's error
// (zk.ErrNoNode, zk.ErrBadVersion, ...) and holds every operation's
// result; Transaction returns those results typed on success too.
//
// When ctx ends, Multi returns ctx's error at once, and a transaction
// already on its way may still be applied. It is not taken back, unlike a
// Create's node: a transaction is the caller's unit (a recipe may count on
// each of its effects as soon as it is applied, a barrier's ready node
// say), and its sets and deletes cannot be undone. A caller that must know
// the outcome waits for the reply, with a ctx that outlives it
// (context.WithoutCancel with a bound of its own), or writes a mark in the
// transaction (a CheckOp, a stamp) and looks for it afterwards.
func (c *Client) Multi(ctx context.Context, ops ...Op) ([]zk.MultiResponse, error) {
	if c == nil {
		return nil, ErrNilClient
	}
	res, err := c.multi(ctx, ops)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// multi runs ops under the retry policy; a refusal by the server is a
// *TransactionError.
func (c *Client) multi(ctx context.Context, ops []Op) ([]zk.MultiResponse, error) {
	reqs, createsTop, err := c.txnRequests(ops)
	if err != nil {
		return nil, err
	}
	var (
		mu      sync.Mutex // an attempt abandoned at ctx's end may still set res
		res     []zk.MultiResponse
		refused error // the server's refusal that came with res
	)
	err = c.do(ctx, clienttel.OpMulti, func(conn *zk.Conn) error {
		r, err := conn.Multi(reqs...)
		if errors.Is(err, zk.ErrNoNode) && createsTop && c.prefix != "" {
			// As Create: the namespace is made on demand (and, being a
			// container, again after the server reaped it).
			if err := c.ensureNamespace(conn); err != nil {
				return err
			}
			r, err = conn.Multi(reqs...)
		}
		mu.Lock()
		res, refused = r, nil
		if err != nil && len(r) > 0 {
			refused = err
		}
		mu.Unlock()
		return err
	})
	mu.Lock()
	defer mu.Unlock()
	for i := range res {
		if res[i].String != "" {
			res[i].String = c.strip(res[i].String)
		}
	}
	if err != nil {
		if refused != nil && errors.Is(err, refused) {
			// The server answered: it refused one of the operations.
			return nil, transactionError(ops, res, err)
		}
		return nil, fmt.Errorf("multi: %w", err)
	}
	return res, nil
}

// txnRequests turns ops into go-zookeeper's requests, with full paths,
// compressed data and ACLs, and checks the transaction's size: it is one
// packet, all operations together, and must fit the server's
// jute.maxbuffer. createsTop reports a create directly under the
// namespace root (the namespace may have to be made first).
func (c *Client) txnRequests(ops []Op) (reqs []any, createsTop bool, err error) {
	if len(ops) == 0 {
		return nil, false, invalid("empty transaction")
	}
	reqs = make([]any, len(ops))
	size, dataSize := zkwire.ReqHeaderSize+zkwire.MultiHeaderSize, 0
	for i, o := range ops {
		if err := ValidatePath(o.path); err != nil {
			return nil, false, fmt.Errorf("op %d: %w", i, err)
		}
		full := c.full(o.path)
		switch o.kind {
		case opCreate:
			req, err := c.txnCreate(i, o, full)
			if err != nil {
				return nil, false, err
			}
			reqs[i] = req
			size += zkwire.MultiHeaderSize + zkwire.CreateBodySize(full, req.Data, req.Acl, false)
			dataSize += len(req.Data)
			if parent, _ := SplitPath(o.path); parent == "/" {
				createsTop = true
			}
		case opDelete:
			reqs[i] = &zk.DeleteRequest{Path: full, Version: o.version}
			size += zkwire.MultiHeaderSize + zkwire.PathBodySize(full)
		case opSet:
			so, err := txnSetOptions(i, o.sOpts)
			if err != nil {
				return nil, false, err
			}
			data, err := c.compress(so.compress, o.path, o.data)
			if err != nil {
				return nil, false, fmt.Errorf("multi: op %d: %w", i, err)
			}
			reqs[i] = &zk.SetDataRequest{Path: full, Data: data, Version: o.version}
			size += zkwire.MultiHeaderSize + zkwire.SetBodySize(full, data)
			dataSize += len(data)
		case opCheck:
			reqs[i] = &zk.CheckVersionRequest{Path: full, Version: o.version}
			size += zkwire.MultiHeaderSize + zkwire.PathBodySize(full)
		default:
			return nil, false, invalid("op %d: zero Op", i)
		}
	}
	if err := c.checkSize(fmt.Sprintf("transaction (%d operations)", len(ops)), size, dataSize); err != nil {
		return nil, false, fmt.Errorf("multi: %w", err)
	}
	return reqs, createsTop, nil
}

// txnCreate is the request of create op i (full: its full path), with
// the client's default data, compression and ACL applied.
func (c *Client) txnCreate(i int, o Op, full string) (*zk.CreateRequest, error) {
	if o.mode == Container || o.mode.isTTL() || o.mode < Persistent || o.mode > PersistentSequentialWithTTL {
		return nil, invalid("op %d: mode %v not allowed in a transaction", i, o.mode)
	}
	co, err := txnCreateOptions(i, o.cOpts)
	if err != nil {
		return nil, err
	}
	data := o.data
	if data == nil {
		data = c.opts.defaultData
	}
	if data, err = c.compress(co.compress, o.path, data); err != nil {
		return nil, fmt.Errorf("multi: op %d: %w", i, err)
	}
	acl := co.acl
	if acl == nil {
		acl = o.acl
	}
	if acl == nil {
		acl = c.opts.aclProvider.ACLForPath(o.path)
	}
	return &zk.CreateRequest{Path: full, Data: data, Acl: acl, Flags: o.mode.flags()}, nil
}

// txnCreateOptions applies the options of the create op i, refusing those
// that have no meaning in a transaction.
func txnCreateOptions(i int, opts []CreateOption) (createOptions, error) {
	var o createOptions
	for j, opt := range opts {
		if opt == nil {
			return o, invalid("op %d: create option %d is nil", i, j)
		}
		if err := opt.applyCreate(&o); err != nil {
			return o, fmt.Errorf("op %d: %w", i, err)
		}
	}
	if o.protected || o.parents || o.stat != nil || o.list != nil || o.ttl != 0 || o.idempotent || o.orSet || o.mode != Persistent {
		return o, invalid("op %d: only Compressed, Uncompressed and WithACL apply to a create in a transaction", i)
	}
	return o, nil
}

// txnSetOptions is txnCreateOptions for a set op.
func txnSetOptions(i int, opts []SetOption) (setOptions, error) {
	var o setOptions
	for j, opt := range opts {
		if opt == nil {
			return o, invalid("op %d: set option %d is nil", i, j)
		}
		if err := opt.applySet(&o); err != nil {
			return o, fmt.Errorf("op %d: %w", i, err)
		}
	}
	if o.idempotent {
		return o, invalid("op %d: Idempotent does not apply to a set in a transaction", i)
	}
	return o, nil
}
