// Package ingest holds what every importer shares: the parsed form of an
// import (Result), the error type that names the file and record at fault,
// exact decimal-to-nanosecond conversion, the manifest overlay
// (--manifest and --set), and the atomic writer of the run directory.
package ingest
