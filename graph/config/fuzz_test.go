package config

import (
	"errors"
	"os"
	"reflect"
	"testing"
)

// FuzzParse: Parse never panics; it returns a valid config or an *Error; a
// config it accepts re-parses from its canonical encoding to the same value.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/same.toml", "testdata/same.json", "testdata/pbg_full.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "")
	}
	f.Add([]byte(minimal), "toml")
	f.Add([]byte(`{"entities":{"a":{"num_partitions":1e400}}}`), "json")
	f.Fuzz(func(t *testing.T, data []byte, format string) {
		c, err := Parse(data, format)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error is not *Error: %v", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted config fails Validate: %v", err)
		}
		back, err := Parse(c.Canonical(), "json")
		if err != nil {
			t.Fatalf("canonical encoding does not load: %v\n%s", err, c.Canonical())
		}
		if !reflect.DeepEqual(c, back) {
			t.Fatalf("canonical round trip differs:\n%s\n%s", c.Canonical(), back.Canonical())
		}
	})
}
