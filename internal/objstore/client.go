package objstore

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"

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

// newClient loads the AWS SDK's standard configuration chain: environment
// variables, AWS_PROFILE and the shared config and credentials files,
// AWS_REGION, AWS_ENDPOINT_URL or AWS_ENDPOINT_URL_S3. With an endpoint,
// addressing is path-style (s3-compatible stores rarely serve
// bucket.host names). Without credentials, requests go unsigned. The SDK's
// own retries are off: fetch retries (invariant 4).
func newClient(ctx context.Context, opt Options) (*client, error) {
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.MaxIdleConnsPerHost = max(2*opt.FetchConcurrency, 16)
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
