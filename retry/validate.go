package retry

import "fmt"

// validator is implemented by policies that can be invalid, or that wrap
// policies that can be.
type validator interface {
	validate() error
}

// starter is implemented by policies that keep state for one call, like
// FromBackOff's BackOff: Do and ToBackOff use start's result, a fresh
// instance, for each call.
type starter interface {
	start() Policy
}

// Validate reports whether p can be used: it returns nil for a usable
// policy, and an error wrapping [ErrInvalidPolicy] when p is nil or was built
// from bad arguments. It does not block. Callers that store a policy for
// later, such as a client option, use it to fail early; [Do] checks the same
// on every call.
func Validate(p Policy) error {
	if p == nil {
		return fmt.Errorf("%w: nil policy", ErrInvalidPolicy)
	}
	if v, ok := p.(validator); ok {
		return v.validate()
	}
	return nil
}

// begin returns the instance of p that one call uses.
func begin(p Policy) Policy {
	if s, ok := p.(starter); ok {
		return s.start()
	}
	return p
}
