package bench

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// MeasureRTT is the median time of n exists requests, one after the other,
// from a new session on servers: the round trip a request sees on that
// path, the server's time included.
func MeasureRTT(ctx context.Context, servers string, n int) (time.Duration, error) {
	conn, err := DialZK(ctx, servers)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var rtts []time.Duration
	for i := 0; i < n+5; i++ {
		start := time.Now()
		if _, _, err := conn.Exists("/"); err != nil {
			return 0, fmt.Errorf("measure round trip: %w", err)
		}
		if i >= 5 { // the first ones warm the path up
			rtts = append(rtts, time.Since(start))
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2], nil
}
