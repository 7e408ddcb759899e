package artifact

// SetFault injects an error at the named steps of pack and sign for the
// duration of a test; it returns the function that removes it.
func SetFault(f func(step string) error) func() {
	testFault = f
	return func() { testFault = nil }
}
