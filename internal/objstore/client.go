package objstore

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"
)

// defaultRegion is used when the configuration names none (an
// S3-compatible store usually ignores it; AWS needs the bucket's region).
const defaultRegion = "us-east-1"

// client is an S3 client and a description of where its credentials came
// from, for error messages (never the credentials themselves).
type client struct {
	s3     *s3.Client
	source string
}

// clients holds the clients made so far, by the AWS environment and the
// connection pool's size they were made for: loading the configuration
// reads files and may ask a credentials service, and one client's
// connections serve every object of its endpoint, so each process makes
// one per environment.
var clients = struct {
	sync.Mutex
	m map[clientKey]*client
}{m: map[clientKey]*client{}}

type clientKey struct {
	env  string // every AWS_ variable, sorted
	idle int    // idle connections per host
}

// sharedClient returns the client for the process's AWS environment and
// opt, made by newClient the first time. A failed load is not kept.
func sharedClient(ctx context.Context, opt Options) (*client, error) {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	slices.Sort(env)
	key := clientKey{strings.Join(env, "\x00"), idleConns(opt)}
	clients.Lock()
	defer clients.Unlock()
	if c := clients.m[key]; c != nil {
		return c, nil
	}
	c, err := newClient(ctx, opt)
	if err != nil {
		return nil, err
	}
	clients.m[key] = c
	return c, nil
}

// idleConns is the idle connections a client keeps per host.
func idleConns(opt Options) int { return max(2*opt.FetchConcurrency, 16) }

// newClient loads the AWS SDK's standard configuration chain: environment
// variables, AWS_PROFILE and the shared config and credentials files,
// AWS_REGION, AWS_ENDPOINT_URL or AWS_ENDPOINT_URL_S3. With an endpoint,
// addressing is path-style (s3-compatible stores rarely serve
// bucket.host names). Without credentials, requests go unsigned. The SDK's
// own retries are off: fetch retries (invariant 4).
func newClient(ctx context.Context, opt Options) (*client, error) {
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.MaxIdleConnsPerHost = idleConns(opt)
		tr.DisableCompression = true
	})
	cfg, err := config.LoadDefaultConfig(ctx,
		config.WithHTTPClient(httpClient),
		config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
		// The SDK's own log lines (such as the EC2 metadata probe's
		// fallback when no credentials are configured) would land in the
		// user's stderr; failures reach the caller as errors instead.
		config.WithLogger(logging.Nop{}),
	)
	if err != nil {
		return nil, fmt.Errorf("objstore: loading the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = defaultRegion
	}
	source := "none (anonymous)"
	if cfg.Credentials != nil {
		if creds, err := cfg.Credentials.Retrieve(ctx); err == nil {
			source = describeSource(creds.Source)
		} else {
			cfg.Credentials = aws.AnonymousCredentials{}
		}
	}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if o.BaseEndpoint != nil {
			o.UsePathStyle = true
		}
		o.Retryer = aws.NopRetryer{}
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &client{s3: c, source: source}, nil
}

// describeSource turns the SDK's name for a credentials provider into
// words for an error message.
func describeSource(src string) string {
	profile := os.Getenv("AWS_PROFILE")
	if profile == "" {
		profile = "default"
	}
	switch {
	case src == "EnvConfigCredentials":
		return "environment (AWS_ACCESS_KEY_ID)"
	case strings.HasPrefix(src, "SharedConfigCredentials: "):
		return fmt.Sprintf("shared credentials file %s, profile %s", strings.TrimPrefix(src, "SharedConfigCredentials: "), profile)
	case src == "":
		return "unnamed provider, profile " + profile
	}
	return src + ", profile " + profile
}
