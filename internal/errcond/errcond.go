package errcond

import "fmt"

// Errorf returns an error whose text is fmt.Sprintf(format, args...) and
// that is cond (errors.Is), as well as anything its %w verbs wrap.
func Errorf(cond error, format string, args ...any) error {
	return &condError{err: fmt.Errorf(format, args...), cond: cond}
}

// condError is an error with a condition that is not part of its text.
type condError struct {
	err  error
	cond error
}

func (e *condError) Error() string { return e.err.Error() }

// Unwrap returns the message's error, then the condition.
func (e *condError) Unwrap() []error { return []error{e.err, e.cond} }
