// Package digits holds the digit rules of every number benchseal prints:
// exact values rounded once, half to even, to a fixed number of places;
// nanoseconds as milliseconds; p-values; fractions as percents. It is a
// leaf (it imports nothing of the module) so that replay, which composes
// reason texts that are part of its JSON contract, compare, which words
// its decisions, and report, which renders the tables, use the same
// functions and no two commands print two values for one thing.
package digits
