package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
)

// EnsurePath creates path and its missing ancestors as persistent nodes, so
// that no workload pays for creating parents (or for the server reaping an
// empty container between cycles) during a run.
func EnsurePath(ctx context.Context, servers, path string) error {
	conn, err := DialZK(ctx, servers)
	if err != nil {
		return err
	}
	defer conn.Close()
	p := ""
	for _, seg := range strings.Split(strings.Trim(path, "/"), "/") {
		p += "/" + seg
		_, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("create %s: %w", p, err)
		}
	}
	return nil
}

// DeleteTree deletes path and everything under it; a missing path is fine.
func DeleteTree(ctx context.Context, servers, path string) error {
	conn, err := DialZK(ctx, servers)
	if err != nil {
		return err
	}
	defer conn.Close()
	return deleteTree(conn, path)
}

func deleteTree(conn *zk.Conn, path string) error {
	children, _, err := conn.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := deleteTree(conn, path+"/"+c); err != nil {
			return err
		}
	}
	err = conn.Delete(path, -1)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}
