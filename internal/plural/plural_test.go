package plural

import "testing"

func TestCount(t *testing.T) {
	cases := []struct{ got, want string }{
		{Count(0, "problem"), "0 problems"},
		{Count(1, "problem"), "1 problem"},
		{Count(2, "problem"), "2 problems"},
		{Count(int64(1), "entity", "entities"), "1 entity"},
		{Count(uint32(7), "entity", "entities"), "7 entities"},
		{Count(-1, "edge"), "-1 edges"},
		{Noun(1, "field"), "field"},
		{Noun(3, "field"), "fields"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
