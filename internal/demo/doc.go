// Package demo holds the test that runs scripts/demo.sh, the command "make
// demo" runs and the README offers first, end to end.
package demo
