module github.com/gocurator/curator

go 1.23

require (
	github.com/cenkalti/backoff/v4 v4.3.0
	github.com/go-zookeeper/zk v1.0.4
	github.com/google/uuid v1.6.0
	go.uber.org/goleak v1.3.0
	go.uber.org/multierr v1.10.0 // indirect
	go.uber.org/zap v1.28.0
)
