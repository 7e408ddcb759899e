// Package cli holds benchseal's commands. Each command lives in its own
// file: an options struct, a constructor that binds flags, and a run
// function that calls one library function and prints. Commands register
// themselves with register in an init function.
package cli
