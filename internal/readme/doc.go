// Package readme holds no code: its test runs every sh block of the
// repository's README.md, as written, so the tour stays runnable.
package readme
