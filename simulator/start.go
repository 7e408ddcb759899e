package simulator

import (
	"context"
	"fmt"
	"net"
)

// Start checks cfg, serves a new simulator on a free port of 127.0.0.1 and
// returns its base URL and a stop function that shuts it down (giving open
// streams a second, as Serve does) and waits until it has. The server
// keeps ctx's values but not its cancellation: a caller interrupted by
// ctx still gets its requests in flight answered until it calls stop.
// A configuration error wraps ErrConfig.
func Start(ctx context.Context, cfg Config) (endpoint string, stop func(), err error) {
	s, err := New(cfg)
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("start simulator: %w", err)
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { s.Serve(sctx, ln); close(done) }()
	return "http://" + ln.Addr().String(), func() { cancel(); <-done }, nil
}
