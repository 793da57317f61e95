package objstore

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Scheme is the prefix of an object URL.
const Scheme = "s3://"

// maxKeyBytes is S3's limit on the length of a key.
const maxKeyBytes = 1024

// IsURL reports whether s names an object (starts with "s3://") rather
// than a local path. It does not check the rest; ParseURL does.
func IsURL(s string) bool { return strings.HasPrefix(s, Scheme) }

// ParseURL splits s3://BUCKET/KEY into its bucket and key (invariant 1).
// The bucket follows S3's naming rules (3 to 63 characters of lower-case
// letters, digits, dots and hyphens, starting and ending with a letter or
// digit); the key is the rest of the string, taken literally (no
// percent-decoding, "?" and "#" are part of it), non-empty, valid UTF-8, at
// most 1024 bytes and not ending in "/".
func ParseURL(s string) (bucket, key string, err error) {
	bad := func(format string, args ...any) (string, string, error) {
		return "", "", fmt.Errorf("objstore: bad object URL %q: %s", s, fmt.Sprintf(format, args...))
	}
	if !IsURL(s) {
		return bad("it does not start with %s", Scheme)
	}
	rest := s[len(Scheme):]
	bucket, key, found := strings.Cut(rest, "/")
	if !found || key == "" {
		return bad("no key after the bucket (want s3://BUCKET/KEY)")
	}
	if msg := checkBucket(bucket); msg != "" {
		return bad("bucket %q %s", bucket, msg)
	}
	switch {
	case !utf8.ValidString(key):
		return bad("the key is not valid UTF-8")
	case len(key) > maxKeyBytes:
		return bad("the key is %d bytes, over S3's limit of %d", len(key), maxKeyBytes)
	case strings.HasSuffix(key, "/"):
		return bad("the key ends in \"/\" (a folder, not an object)")
	}
	return bucket, key, nil
}

// checkBucket returns what is wrong with a bucket name, or "".
func checkBucket(b string) string {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Sprintf("has %d characters; a bucket name has 3 to 63", len(b))
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return fmt.Sprintf("has %q at byte %d; a bucket name has only lower-case letters, digits, '.' and '-'", c, i)
		}
	}
	if !alnum(b[0]) || !alnum(b[len(b)-1]) {
		return "must start and end with a letter or digit"
	}
	if strings.Contains(b, "..") {
		return "has two dots in a row"
	}
	return ""
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// objectURL is the inverse of ParseURL.
func objectURL(bucket, key string) string { return Scheme + bucket + "/" + key }
