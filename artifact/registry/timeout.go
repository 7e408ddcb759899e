package registry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"oras.land/oras-go/v2/registry/remote/retry"

	"github.com/benchseal/benchseal/internal/errcond"
)

// ErrTimeout is returned when a registry did not answer in time: no
// response headers within the response timeout, or the whole Push or
// Pull not done within its timeout (a registry that accepts and never
// answers, or trickles its answer).
var ErrTimeout = errors.New("registry timed out")

// Default timeouts of Options.
const (
	// DefaultResponseHeaderTimeout bounds the wait for one response's
	// headers once its request is sent.
	DefaultResponseHeaderTimeout = 30 * time.Second
	// DefaultTimeout bounds a whole Push or Pull: at 10 Mbit/s it moves
	// about 4 GB.
	DefaultTimeout = time.Hour
	// dialTimeout and tlsHandshakeTimeout bound connecting.
	dialTimeout         = 30 * time.Second
	tlsHandshakeTimeout = 10 * time.Second
)

// timeouts returns the response-header and overall timeouts of opts (0:
// none).
func (opts *Options) timeouts() (header, overall time.Duration) {
	header, overall = opts.ResponseHeaderTimeout, opts.Timeout
	if header == 0 {
		header = DefaultResponseHeaderTimeout
	}
	if overall == 0 {
		overall = DefaultTimeout
	}
	return max(header, 0), max(overall, 0)
}

// httpClient returns opts.HTTPClient, else oras-go's retrying client over
// a transport with the connect and response-header timeouts.
func (opts *Options) httpClient() *http.Client {
	if opts.HTTPClient != nil {
		return opts.HTTPClient
	}
	header, _ := opts.timeouts()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = tlsHandshakeTimeout
	tr.ResponseHeaderTimeout = header
	return &http.Client{Transport: &retry.Transport{Base: tr, Policy: retryPolicy}}
}

// retryPolicy is oras-go's retry.DefaultPolicy (up to 5 retries, 0.2-3 s
// apart) except that a timed-out request is not retried: the default
// retries any net.Error whose Timeout() is true, the response-header
// timeout's included, so a silent registry took 6 response timeouts plus
// 6.75 s of backoff where the error named one.
func retryPolicy() retry.Policy {
	return &retry.GenericPolicy{
		Retryable: func(resp *http.Response, err error) (bool, error) {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return false, nil
			}
			return retry.DefaultPredicate(resp, err)
		},
		Backoff:  retry.DefaultBackoff,
		MinWait:  200 * time.Millisecond,
		MaxWait:  3 * time.Second,
		MaxRetry: 5,
	}
}

// overallTimeout is the cause of a context cancelled by the overall
// timeout.
type overallTimeout struct {
	what string
	d    time.Duration
}

func (e *overallTimeout) Error() string {
	return fmt.Sprintf("%s: not done within %s (the overall timeout): the registry is not answering, or too slowly", e.what, e.d)
}

func (e *overallTimeout) Unwrap() error { return ErrTimeout }

// withTimeout bounds ctx by the overall timeout of opts, for what (the
// operation, named in the error).
func (opts *Options) withTimeout(ctx context.Context, what string) (context.Context, context.CancelFunc) {
	_, overall := opts.timeouts()
	if overall <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, overall, &overallTimeout{what, overall})
}

// timeoutError turns the error of an operation run under ctx (from
// withTimeout) into one that says which timeout ran out, when one did.
func (opts *Options) timeoutError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var ot *overallTimeout
	if errors.As(context.Cause(ctx), &ot) {
		return ot
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() && !errors.Is(err, ErrTimeout) {
		header, _ := opts.timeouts()
		return errcond.Errorf(ErrTimeout, "registry timed out: no response (headers) within %s of a request, the response timeout: %w", header, err)
	}
	return err
}
