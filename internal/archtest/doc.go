// Package archtest holds no code: its test keeps the module's import graph
// pointing downward (schema ← artifact ← verify; schema ← replay) and keeps
// library packages free of the CLI framework.
package archtest
