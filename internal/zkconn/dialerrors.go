package zkconn

import (
	"strings"
)

type serverDialError struct {
	addr string
	err  error
}

// dialErrors is the last dial error of each server tried, in order.
type dialErrors []serverDialError

// Error lists each server's error.
func (e dialErrors) Error() string {
	var b strings.Builder
	for i, d := range e {
		if i > 0 {
			b.WriteString("; ")
		}
		msg := d.err.Error()
		if !strings.Contains(msg, d.addr) {
			// A custom dialer's error may not name the server.
			b.WriteString("dial " + d.addr + ": ")
		}
		b.WriteString(msg)
	}
	return b.String()
}

// Unwrap returns each server's error.
func (e dialErrors) Unwrap() []error {
	errs := make([]error, len(e))
	for i, d := range e {
		errs[i] = d.err
	}
	return errs
}
