package framework

import (
	"testing"
	"time"
)

// The client-side expiry deadline counts from the send of the last answered
// request, never from when the client noticed the silence, and keeps a tenth
// of the timeout as margin whatever percentage is asked for.
func TestSessionDeadline(t *testing.T) {
	ack := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		timeout time.Duration
		pct     int
		want    time.Duration // after ack
	}{
		{"default", 3 * time.Second, maxExpiryPercent, 2700 * time.Millisecond},
		{"asked 100 keeps the margin", 3 * time.Second, 100, 2700 * time.Millisecond},
		{"lower percent", 10 * time.Second, 50, 5 * time.Second},
		{"one percent", 10 * time.Second, 1, 100 * time.Millisecond},
		{"long session", 60 * time.Second, 90, 54 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sessionDeadline(ack, tt.timeout, tt.pct).Sub(ack)
			if got != tt.want {
				t.Fatalf("deadline %v after the acknowledged send, want %v", got, tt.want)
			}
			if got >= tt.timeout {
				t.Fatalf("deadline %v not before the server's earliest expiry %v", got, tt.timeout)
			}
		})
	}
	// Nothing answered yet: one deadline from now.
	before := time.Now()
	d := sessionDeadline(time.Time{}, time.Second, 90)
	if d.Before(before.Add(900*time.Millisecond)) || d.After(time.Now().Add(900*time.Millisecond)) {
		t.Fatalf("deadline with no acknowledgement = %v, want 900ms from now", d.Sub(before))
	}
}
