package retry_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/retry"
)

func ExampleDo() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	attempts := 0
	err := retry.Do(ctx, retry.ExponentialBackoff(time.Millisecond, 5), func(ctx context.Context) error {
		attempts++
		if attempts < 3 {
			return zk.ErrConnectionClosed // outcome unknown: retried
		}
		return nil
	})
	fmt.Println(attempts, err)

	err = retry.Do(ctx, retry.NTimes(5, time.Millisecond), func(ctx context.Context) error {
		return zk.ErrNoNode // a definite answer: returned at once
	})
	fmt.Println(err)
	// Output:
	// 3 <nil>
	// zk: node does not exist
}

func ExampleDo_gaveUp() {
	err := retry.Do(context.Background(), retry.NTimes(2, time.Millisecond), func(ctx context.Context) error {
		return zk.ErrConnectionClosed
	})
	fmt.Println(err)
	fmt.Println(errors.Is(err, zk.ErrConnectionClosed))
	// Output:
	// retry: gave up after 2 retries: zk: connection closed
	// true
}

func ExampleDo_nested() {
	// The inner Do shares the outer call's budget of 3 retries, so the
	// operation runs 4 times in all, not 16.
	attempts := 0
	policy := retry.NTimes(3, time.Millisecond)
	_ = retry.Do(context.Background(), policy, func(ctx context.Context) error {
		return retry.Do(ctx, policy, func(ctx context.Context) error {
			attempts++
			return zk.ErrConnectionClosed
		})
	})
	fmt.Println(attempts)
	// Output: 4
}

func ExampleExponentialBackoff() {
	const base = 100 * time.Millisecond
	p := retry.ExponentialBackoff(base, 3)
	for retryCount := 0; retryCount <= 3; retryCount++ {
		sleep, ok := p.AllowRetry(retryCount, 0)
		if !ok {
			fmt.Printf("retry %d: refused\n", retryCount)
			continue
		}
		most := base * time.Duration(1<<(retryCount+1)-1)
		fmt.Printf("retry %d: sleep between %v and %v: %t\n", retryCount, base, most, sleep >= base && sleep <= most)
	}
	// Output:
	// retry 0: sleep between 100ms and 100ms: true
	// retry 1: sleep between 100ms and 300ms: true
	// retry 2: sleep between 100ms and 700ms: true
	// retry 3: refused
}

func ExampleUntilElapsed() {
	p := retry.UntilElapsed(time.Second, 300*time.Millisecond)
	fmt.Println(p.AllowRetry(3, 999*time.Millisecond))
	fmt.Println(p.AllowRetry(4, time.Second))
	// Output:
	// 300ms true
	// 0s false
}

func ExampleSessionFailed() {
	attempts := 0
	err := retry.Do(context.Background(), retry.SessionFailed(retry.NTimes(5, time.Millisecond)), func(ctx context.Context) error {
		attempts++
		if attempts == 1 {
			return zk.ErrConnectionClosed
		}
		return zk.ErrSessionExpired
	})
	fmt.Println(attempts, err)
	// Output: 2 retry: gave up after 1 retries: zk: session has been expired by the server
}

func ExampleFromBackOff() {
	p := retry.FromBackOff(func() backoff.BackOff {
		return backoff.WithMaxRetries(backoff.NewConstantBackOff(time.Millisecond), 2)
	})
	attempts := 0
	err := retry.Do(context.Background(), p, func(ctx context.Context) error {
		attempts++
		return zk.ErrNoServer
	})
	fmt.Println(attempts, err)
	// Output: 3 retry: gave up after 2 retries: zk: could not connect to a server
}

func ExampleToBackOff() {
	attempts := 0
	err := backoff.Retry(func() error {
		attempts++
		if attempts < 3 {
			return zk.ErrConnectionClosed
		}
		return nil
	}, retry.ToBackOff(retry.NTimes(5, time.Millisecond)))
	fmt.Println(attempts, err)
	// Output: 3 <nil>
}

func ExampleRetryable() {
	errReconnecting := errors.New("framework: reconnecting")
	err := fmt.Errorf("create /a: %w", retry.Retryable(errReconnecting))
	fmt.Println(err, retry.IsRetryable(err), errors.Is(err, errReconnecting))
	// Output: create /a: framework: reconnecting true true
}

func ExampleValidate() {
	fmt.Println(retry.Validate(retry.NTimes(-1, time.Second)))
	err := retry.Do(context.Background(), retry.Forever(-time.Second), func(ctx context.Context) error {
		panic("not called for an invalid policy")
	})
	fmt.Println(errors.Is(err, retry.ErrInvalidPolicy))
	// Output:
	// retry: invalid policy: NTimes: negative n -1
	// true
}

func ExampleWithNewBudget() {
	attempts := 0
	policy := retry.NTimes(1, time.Millisecond)
	_ = retry.Do(context.Background(), policy, func(ctx context.Context) error {
		// Work that outlives this call gets a budget of its own.
		background := retry.WithNewBudget(context.WithoutCancel(ctx))
		return retry.Do(background, policy, func(ctx context.Context) error {
			attempts++
			return zk.ErrConnectionClosed
		})
	})
	fmt.Println(attempts)
	// Output: 4
}
