package objstore

import (
	"strings"
	"testing"
)

// TestParseURL: invariant 1.
func TestParseURL(t *testing.T) {
	good := []struct{ in, bucket, key string }{
		{"s3://my-bucket/a.ctf", "my-bucket", "a.ctf"},
		{"s3://b.c.d/dir/sub/file.parquet", "b.c.d", "dir/sub/file.parquet"},
		{"s3://abc/x?y#z", "abc", "x?y#z"},
		{"s3://abc//lead", "abc", "/lead"},
		{"s3://123/é", "123", "é"},
	}
	for _, c := range good {
		b, k, err := ParseURL(c.in)
		if err != nil || b != c.bucket || k != c.key {
			t.Errorf("ParseURL(%q) = %q, %q, %v; want %q, %q", c.in, b, k, err, c.bucket, c.key)
		}
		if !IsURL(c.in) {
			t.Errorf("IsURL(%q) = false", c.in)
		}
	}
	bad := []struct{ in, want string }{
		{"/local/file", "does not start with s3://"},
		{"S3://abc/k", "does not start with s3://"},
		{"s3://abc", "no key"},
		{"s3://abc/", "no key"},
		{"s3:///k", "has 0 characters"},
		{"s3://ab/k", "has 2 characters"},
		{"s3://" + strings.Repeat("a", 64) + "/k", "has 64 characters"},
		{"s3://Abc/k", "'A' at byte 0"},
		{"s3://ab_c/k", "'_' at byte 2"},
		{"s3://-abc/k", "start and end"},
		{"s3://abc./k", "start and end"},
		{"s3://a..b/k", "two dots"},
		{"s3://abc/dir/", "ends in \"/\""},
		{"s3://abc/\xff", "UTF-8"},
		{"s3://abc/" + strings.Repeat("k", 1025), "over S3's limit"},
	}
	for _, c := range bad {
		_, _, err := ParseURL(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "objstore: ") {
			t.Errorf("ParseURL(%q) error %v; want one with %q", c.in, err, c.want)
		}
	}
}

// FuzzParseURL: invariant 1. A parsed URL rebuilds to its input, and its
// parts obey the rules.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"s3://abc/k", "s3://a.b-c/d/e", "s3://abc/", "s3://x", "", "s3://abc/\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, k, err := ParseURL(s)
		if err != nil {
			if b != "" || k != "" {
				t.Fatalf("error %v with parts %q %q", err, b, k)
			}
			return
		}
		if objectURL(b, k) != s {
			t.Fatalf("%q parsed to %q %q, which rebuild to %q", s, b, k, objectURL(b, k))
		}
		if checkBucket(b) != "" || k == "" || strings.HasSuffix(k, "/") || strings.Contains(b, "/") {
			t.Fatalf("%q parsed to bad parts %q %q", s, b, k)
		}
	})
}
