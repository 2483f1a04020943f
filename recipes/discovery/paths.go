package discovery

import (
	"fmt"

	"github.com/gocurator/curator/framework"
)

// validName checks that s is a node name ZooKeeper accepts.
func validName(s string) error {
	if err := framework.ValidatePath("/" + s); err != nil {
		return fmt.Errorf("%q: %w", s, err)
	}
	return nil
}
