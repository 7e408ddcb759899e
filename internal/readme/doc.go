// Package readme holds no code: its tests run every sh block of the
// repository's README.md, and the first block of docs/bundles.md, as
// written, so the tour stays runnable.
package readme
