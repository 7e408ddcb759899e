// Package archtest holds no code: its test keeps the module's import graph
// pointing downward (schema ← artifact ← verify; schema ← replay), keeps
// library packages free of the CLI framework and numbers out of the
// commands (report, which only cmd/ may import, makes every digit).
package archtest
