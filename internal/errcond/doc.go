// Package errcond gives an error its condition: a sentinel errors.Is
// matches, without the sentinel's words in the error's text. Packages
// declare one sentinel per condition (as oras-go's errdef does) and
// return messages that say only what went wrong.
package errcond
