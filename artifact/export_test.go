package artifact

// SetFault injects an error at the named steps of pack and sign for the
// duration of a test; it returns the function that removes it.
func SetFault(f func(step string) error) func() {
	testFault = f
	return func() { testFault = nil }
}

// SetSignRead calls f with the bytes pack --key reads from its staged
// bundle before signing it, for the duration of a test.
func SetSignRead(f func(int64)) func() {
	signRead = f
	return func() { signRead = nil }
}
