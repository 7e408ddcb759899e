// Package errcond gives an error its condition: a sentinel errors.Is
// matches, without the sentinel's words in the error's text. Packages
// declare one sentinel per condition (as oras-go's errdef does) and
// return messages that say only what went wrong.
//
// It is this module's one way to attach a condition:
//
//	errcond.Errorf(plan.ErrPlan, "invalid plan: point %s: no prompts", name)
//
// never fmt.Errorf("%w: point %s: no prompts", plan.ErrPlan, name), which
// makes the sentinel's words part of every message and so ties what is
// printed to the sentinel's text. A message that should read like its
// condition says so in its own words. A condition within another is
// declared with Errorf too (artifact.ErrKeyNotOpened is an
// artifact.ErrKey). internal/archtest's TestOneErrorIdiom fails on a
// sentinel given to %w in non-test code.
package errcond
