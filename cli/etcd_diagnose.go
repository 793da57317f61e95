package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// diagnoseTLS looks, after etcd did not answer, for a reason a person can
// act on: the server speaks TLS and the client does not (or the reverse),
// its certificate is not signed by --etcd-cacert, or it requires a client
// certificate its CA signed. It returns nil when it finds none (etcd down,
// or answering and just slow).
func (e *etcdClient) diagnoseTLS(tc *tls.Config) error {
	for _, ep := range strings.Split(*e.endpoints, ",") {
		raw, err := net.DialTimeout("tcp", ep, time.Second)
		if err != nil {
			continue // nothing listens: unreachable
		}
		probe := &tls.Config{InsecureSkipVerify: true} // only to see whether it speaks TLS
		if tc != nil {
			probe = tc.Clone()
		}
		host, _, _ := net.SplitHostPort(ep)
		probe.ServerName = host
		conn := tls.Client(raw, probe)
		conn.SetDeadline(time.Now().Add(time.Second))
		err = conn.Handshake()
		if tc == nil {
			conn.Close()
			if err == nil {
				return fmt.Errorf("etcd at %s serves TLS: give --etcd-cacert (and --etcd-cert and --etcd-key if it asks for client certificates)", ep)
			}
			continue
		}
		if err == nil {
			// TLS 1.3: a refused client certificate shows at the first read.
			conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			_, err = conn.Read(make([]byte, 1))
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				err = nil
			}
		}
		conn.Close()
		var unknown x509.UnknownAuthorityError
		var host509 x509.HostnameError
		switch {
		case err == nil:
			continue
		case errors.As(err, &unknown):
			return fmt.Errorf("etcd at %s: its certificate is not signed by a CA of --etcd-cacert %s", ep, *e.cacert)
		case errors.As(err, &host509):
			return fmt.Errorf("etcd at %s: its certificate is not for %s", ep, host)
		case strings.Contains(err.Error(), "first record does not look like a TLS handshake"):
			return fmt.Errorf("etcd at %s does not serve TLS: leave out --etcd-cacert, --etcd-cert and --etcd-key", ep)
		case strings.Contains(err.Error(), "certificate required"), strings.Contains(err.Error(), "bad certificate"),
			strings.Contains(err.Error(), "unknown certificate authority"):
			return fmt.Errorf("etcd at %s refused this client: it requires a client certificate signed by its CA (--etcd-cert, --etcd-key)", ep)
		}
	}
	return nil
}
