// Package protname makes and recognises the names of Curator's protected
// nodes: "_c_<UUID>-<name>", where the random UUID (version 4, in its
// 36-character form) lets a client find the node its lost create made
// (framework's Protected). The form is Curator's, so that either library
// recognises the other's nodes; go-zookeeper's own protected form (a
// UUID without dashes) is not recognised, as Curator does not.
package protname

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/google/uuid"
)

// Prefix is the start of every protected node's name.
const Prefix = "_c_"

// Overhead is how much longer a protected name is than the name.
const Overhead = len(Prefix) + 36 + len("-")

// NewPrefix returns "_c_<random UUID>-", built in one allocation.
func NewPrefix() string {
	var b [Overhead]byte
	ID(&b)
	return string(b[:])
}

// ID writes "_c_<random UUID>-" into b.
func ID(b *[Overhead]byte) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		panic(err) // crypto/rand.Read does not fail on the platforms Go supports
	}
	id[6] = id[6]&0x0f | 0x40 // version 4
	id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
	copy(b[:], Prefix)
	hex.Encode(b[3:11], id[0:4])
	b[11] = '-'
	hex.Encode(b[12:16], id[4:6])
	b[16] = '-'
	hex.Encode(b[17:21], id[6:8])
	b[21] = '-'
	hex.Encode(b[22:26], id[8:10])
	b[26] = '-'
	hex.Encode(b[27:39], id[10:16])
	b[39] = '-'
}

// Is reports whether name is a protected node name as Curator recognises
// it: longer than 40, "_c_" prefix, a UUID in [3, 39) and a '-' at index
// 39.
func Is(name string) bool {
	if len(name) <= 40 || !strings.HasPrefix(name, Prefix) || name[39] != '-' {
		return false
	}
	_, err := uuid.Parse(name[3:39])
	return err == nil
}

// Strip returns name without its protected prefix.
func Strip(name string) string {
	if Is(name) {
		return name[40:]
	}
	return name
}
