package capture_test

import "github.com/benchseal/benchseal/schema"

// validateRunDir runs schema's run validator, the oracle for every run
// these tests write.
func validateRunDir(dir string) error { return schema.ValidateRunDocuments(dir, 20) }
