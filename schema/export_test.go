package schema

// SetFormatHook sets the function called for every problem message a
// RecordChecker formats, and returns a function restoring the previous one.
func SetFormatHook(f func()) (restore func()) {
	old := formatHook
	formatHook = f
	return func() { formatHook = old }
}
