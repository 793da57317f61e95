package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// The kinds of failure a caller may want to tell apart (errors.Is).
var (
	// ErrReplaced: the object's ETag changed since Open (invariant 3).
	ErrReplaced = errors.New("objstore: object replaced during the run")
	// ErrNotFound: no such bucket or key.
	ErrNotFound = errors.New("objstore: no such object")
	// ErrDenied: the server refused the credentials or the access.
	ErrDenied = errors.New("objstore: access denied")
	// ErrTimeout: transient errors went on past FetchTimeout.
	ErrTimeout = errors.New("objstore: fetch timeout")
)

// Error is a failure about one object. Its text names the object's URL and
// what was being done; it unwraps to a sentinel above (when one applies)
// and to the cause.
type Error struct {
	URL  string // s3://bucket/key
	Op   string // "open", "read bytes 0-1023", ...
	Msg  string // what went wrong, in words
	Kind error  // ErrReplaced, ErrNotFound, ErrDenied, ErrTimeout or nil
	Err  error  // the client's or the network's error, or nil
}

func (e *Error) Error() string {
	s := "objstore: " + e.URL + ": " + e.Op + ": " + e.Msg
	if e.Err != nil {
		s += ": " + causeText(e.Err)
	}
	return s
}

// causeText is how an Error's message ends with its cause. An answer of the
// store is told by its status, its error code and message, and its request
// ID (what a store's support asks for), not by the SDK's text, which
// repeats the operation and adds the host ID.
func causeText(err error) string {
	var re *awshttp.ResponseError
	if !errors.As(err, &re) {
		return err.Error()
	}
	s := fmt.Sprintf("HTTP %d", re.HTTPStatusCode())
	var ae smithy.APIError
	if errors.As(err, &ae) {
		if code := ae.ErrorCode(); code != "" {
			s += " " + code
		}
		if msg := ae.ErrorMessage(); msg != "" && msg != ae.ErrorCode() {
			s += " (" + msg + ")"
		}
	}
	if id := re.ServiceRequestID(); id != "" {
		s += ", request ID " + id
	}
	return s
}

func (e *Error) Unwrap() []error {
	var errs []error
	for _, err := range []error{e.Kind, e.Err} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// class sorts a client error by what to do about it.
type class int

const (
	permanent class = iota
	transient       // retry with backoff
	replaced        // 412: the If-Match ETag no longer matches
	notFound        // 404
	denied          // 403
	canceled        // the caller's context ended
)

// classify tells transient errors (network failures, short bodies, 429 and
// 5xx) from the rest (invariant 4).
func classify(err error) class {
	if errors.Is(err, context.Canceled) {
		return canceled
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		switch re.HTTPStatusCode() {
		case 412:
			return replaced
		case 404:
			return notFound
		case 403:
			return denied
		case 429, 500, 502, 503, 504:
			return transient
		}
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "PreconditionFailed":
			return replaced
		case "NoSuchKey", "NoSuchBucket", "NotFound":
			return notFound
		case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "Forbidden":
			return denied
		case "SlowDown", "InternalError", "ServiceUnavailable", "RequestTimeout", "Throttling", "TooManyRequests":
			return transient
		}
		if re == nil {
			return permanent
		}
	}
	var rse *smithyhttp.RequestSendError
	var ne net.Error
	switch {
	case errors.As(err, &rse), errors.As(err, &ne),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, context.DeadlineExceeded):
		return transient
	}
	return permanent
}
