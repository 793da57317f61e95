package cli

import (
	"fmt"
	"strconv"
	"strings"
)

// byteSize is a flag holding a byte count, written and shown as a plain
// number or with a KiB, MiB or GiB suffix ("32MiB"), so that a default is
// shown in one form only.
type byteSize int64

func (b *byteSize) String() string { return formatSize(int64(*b)) }

func (b *byteSize) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}

// formatSize writes n with the largest binary suffix that divides it.
func formatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// parseSize reads a byte count with an optional KiB, MiB or GiB suffix.
func parseSize(v string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if strings.HasSuffix(v, u.suffix) {
			v, mult = strings.TrimSuffix(v, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n > (1<<62)/mult || n < -(1<<62)/mult {
		return 0, fmt.Errorf("want a byte count such as 1048576 or 32MiB")
	}
	return n * mult, nil
}
