// Package plural writes counts in messages with the noun in the right
// number: "1 problem", "2 problems", "0 entities".
package plural

import "strconv"

// Integer is any integer type a count may have.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Count returns n and the noun: one (the singular) when n is 1, otherwise
// many[0] when given ("entities"), else one with an "s" appended.
func Count[T Integer](n T, one string, many ...string) string {
	return strconv.FormatInt(int64(n), 10) + " " + Noun(n, one, many...)
}

// Noun returns the noun alone, in the number n asks for.
func Noun[T Integer](n T, one string, many ...string) string {
	if n == 1 {
		return one
	}
	if len(many) > 0 {
		return many[0]
	}
	return one + "s"
}
