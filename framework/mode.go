package framework

import (
	"fmt"

	"github.com/go-zookeeper/zk"
)

// Mode is a znode's create mode.
type Mode int

// The create modes of ZooKeeper.
const (
	// Persistent nodes live until deleted.
	Persistent Mode = iota
	// Ephemeral nodes are deleted when the session that made them ends.
	Ephemeral
	// PersistentSequential nodes get the parent's next 10-digit sequence
	// number appended to their name.
	PersistentSequential
	// EphemeralSequential nodes are ephemeral and sequential.
	EphemeralSequential
	// Container nodes are deleted by the server once their last child is.
	Container
	// PersistentWithTTL nodes are deleted by the server once they have had
	// no children for the TTL (see WithTTL). The server needs
	// zookeeper.extendedTypesEnabled=true.
	PersistentWithTTL
	// PersistentSequentialWithTTL is PersistentWithTTL, sequential.
	PersistentSequentialWithTTL
)

var modeNames = [...]string{"Persistent", "Ephemeral", "PersistentSequential", "EphemeralSequential",
	"Container", "PersistentWithTTL", "PersistentSequentialWithTTL"}

// String returns the mode's name.
func (m Mode) String() string {
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// IsEphemeral reports whether nodes of mode m die with their session.
func (m Mode) IsEphemeral() bool { return m == Ephemeral || m == EphemeralSequential }

// IsSequential reports whether the server appends a sequence number.
func (m Mode) IsSequential() bool {
	return m == PersistentSequential || m == EphemeralSequential || m == PersistentSequentialWithTTL
}

func (m Mode) isTTL() bool { return m == PersistentWithTTL || m == PersistentSequentialWithTTL }

func (m Mode) flags() int32 {
	switch m {
	case Ephemeral:
		return zk.FlagEphemeral
	case PersistentSequential:
		return zk.FlagSequence
	case EphemeralSequential:
		return zk.FlagEphemeralSequential
	case Container:
		return zk.FlagContainer
	case PersistentWithTTL:
		return zk.FlagTTL
	case PersistentSequentialWithTTL:
		return zk.FlagPersistentSequentialWithTTL
	}
	return zk.FlagPersistent
}
