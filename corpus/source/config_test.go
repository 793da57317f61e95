package source

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSchedule(t *testing.T) {
	sc, err := ParseSchedule("128*2:1024")
	if err != nil {
		t.Fatal(err)
	}
	for e, want := range []int{128, 128, 1024, 1024, 1024} {
		if got := sc.At(e); got != want {
			t.Errorf("At(%d) = %d, want %d", e, got, want)
		}
	}
	if sc.String() != "128*2:1024" {
		t.Errorf("String %q", sc)
	}
	c, _ := ParseSchedule("64")
	if c.At(0) != 64 || c.At(1000) != 64 || c.String() != "64" {
		t.Errorf("constant: %d %d %q", c.At(0), c.At(1000), c)
	}
	if (Schedule{}).At(3) != DefaultMinibatchSize || (Schedule{}).String() != "256" {
		t.Error("zero schedule is not 256")
	}
	m, _ := ParseSchedule("1*3:2:3*1:4")
	for e, want := range []int{1, 1, 1, 2, 3, 4, 4} {
		if m.At(e) != want {
			t.Errorf("1*3:2:3*1:4 At(%d) = %d, want %d", e, m.At(e), want)
		}
	}
	bad := map[string]string{
		"":           "empty",
		"128*2:x":    `token 2 "x": size "x"`,
		"128*0:5":    `token 1 "128*0": repeat "0"`,
		"0":          `size "0"`,
		"12:-3":      `token 2 "-3"`,
		"5*":         `repeat ""`,
		"128*2::1":   `token 2 ""`,
		"1.5":        `size "1.5"`,
		"128*2*3:10": `repeat "2*3"`,
	}
	for in, want := range bad {
		_, err := ParseSchedule(in)
		if err == nil || !errors.Is(err, ErrSchedule) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSchedule(%q): %v, want %q", in, err, want)
		}
	}
}

func TestParseEpochSize(t *testing.T) {
	for in, want := range map[string]EpochSize{"full": EpochFull, "inf": EpochInf, "1": 1, "5000": 5000} {
		got, err := ParseEpochSize(in)
		if err != nil || got != want || got.String() != in {
			t.Errorf("ParseEpochSize(%q) = %v (%q), %v", in, got, got.String(), err)
		}
	}
	for _, in := range []string{"", "0", "-1", "Full", "1e3", "18446744073709551615"} {
		if _, err := ParseEpochSize(in); err == nil || !strings.Contains(err.Error(), "epoch size") {
			t.Errorf("ParseEpochSize(%q): %v", in, err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	ok := []Config{{}, {Workers: 4, Rank: 3}, {Workers: 1}}
	for _, c := range ok {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	bad := map[string]Config{
		"workers -1":    {Workers: -1},
		"rank 4":        {Workers: 4, Rank: 4},
		"rank -1":       {Rank: -1},
		"randomizer":    {Randomize: randomizeKind("shuffle")},
		"window chunks": {Randomize: randomizeWindow(-2)},
		"schedule":      {Schedule: Schedule{steps: []scheduleStep{{0, 1}}}},
	}
	for what, c := range bad {
		if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), "source: ") {
			t.Errorf("%s: %v", what, err)
		}
	}
}
