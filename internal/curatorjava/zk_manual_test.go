package curatorjava

import "testing"

func startZooKeeper(t *testing.T) string { return "localhost:21810" }
