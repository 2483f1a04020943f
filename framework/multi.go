package framework

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
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
}

const (
	opCreate = iota
	opDelete
	opSet
	opCheck
)

// CreateOp creates path with data in mode (persistent, ephemeral or
// sequential; containers and TTL nodes cannot be made in a transaction).
// nil data means the client's default data.
func CreateOp(path string, data []byte, mode Mode) Op {
	return Op{kind: opCreate, path: path, data: data, mode: mode}
}

// DeleteOp deletes path if its version is version (-1: any).
func DeleteOp(path string, version int32) Op {
	return Op{kind: opDelete, path: path, version: version}
}

// SetOp sets path's data if its version is version (-1: any).
func SetOp(path string, data []byte, version int32) Op {
	return Op{kind: opSet, path: path, data: data, version: version}
}

// CheckOp fails the transaction unless path exists with version (-1: any
// version, so it checks only that the node exists).
func CheckOp(path string, version int32) Op {
	return Op{kind: opCheck, path: path, version: version}
}

// Path returns the path the operation is about.
func (o Op) Path() string { return o.path }

// Multi runs ops atomically: all are applied or none. On failure the error
// wraps the first failing operation's error (zk.ErrNoNode, ...). Paths of created nodes in the responses are
// returned without namespace.
func (c *Client) Multi(ctx context.Context, ops ...Op) ([]zk.MultiResponse, error) {
	if c == nil {
		return nil, ErrNilClient
	}
	if len(ops) == 0 {
		return nil, invalid("empty transaction")
	}
	reqs := make([]any, len(ops))
	createsTop := false // a create directly under the namespace root
	// The transaction is one packet: its size, all operations together,
	// must fit the server's jute.maxbuffer.
	size, dataSize := reqHeaderSize+multiHeaderSize, 0
	for i, o := range ops {
		if err := ValidatePath(o.path); err != nil {
			return nil, fmt.Errorf("op %d: %w", i, err)
		}
		full := c.full(o.path)
		switch o.kind {
		case opCreate:
			if o.mode == Container || o.mode.isTTL() || o.mode < Persistent || o.mode > PersistentSequentialWithTTL {
				return nil, invalid("op %d: mode %v not allowed in a transaction", i, o.mode)
			}
			data := o.data
			if data == nil {
				data = c.opts.defaultData
			}
			acl := o.acl
			if acl == nil {
				acl = c.opts.aclProvider.ACLForPath(o.path)
			}
			reqs[i] = &zk.CreateRequest{Path: full, Data: data, Acl: acl, Flags: o.mode.flags()}
			size += multiHeaderSize + createBodySize(full, data, acl, false)
			dataSize += len(data)
			if parent, _ := SplitPath(o.path); parent == "/" {
				createsTop = true
			}
		case opDelete:
			reqs[i] = &zk.DeleteRequest{Path: full, Version: o.version}
			size += multiHeaderSize + pathBodySize(full)
		case opSet:
			reqs[i] = &zk.SetDataRequest{Path: full, Data: o.data, Version: o.version}
			size += multiHeaderSize + setBodySize(full, o.data)
			dataSize += len(o.data)
		case opCheck:
			reqs[i] = &zk.CheckVersionRequest{Path: full, Version: o.version}
			size += multiHeaderSize + pathBodySize(full)
		default:
			return nil, invalid("op %d: zero Op", i)
		}
	}
	if err := c.checkSize(fmt.Sprintf("transaction (%d operations)", len(ops)), size, dataSize); err != nil {
		return nil, fmt.Errorf("multi: %w", err)
	}
	var res []zk.MultiResponse
	err := c.do(ctx, reqMulti, func(conn *zk.Conn) error {
		r, err := conn.Multi(reqs...)
		if errors.Is(err, zk.ErrNoNode) && createsTop && c.prefix != "" {
			// As Create: the namespace is made on demand (and, being a
			// container, again after the server reaped it).
			if err := c.ensureNamespace(conn); err != nil {
				return err
			}
			r, err = conn.Multi(reqs...)
		}
		res = r
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("multi: %w", err)
	}
	for i := range res {
		if res[i].String != "" {
			res[i].String = c.strip(res[i].String)
		}
	}
	return res, nil
}
