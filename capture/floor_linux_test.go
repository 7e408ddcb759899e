package capture_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// floorTokens is the answer length the floor benchmarks ask for; with
// ignore_eos and min_tokens the simulator sends exactly this many content
// chunks per request, so chunks = requests × floorTokens.
const floorTokens = 128

func floorBody() string {
	return fmt.Sprintf(`{"model":"benchseal-sim","messages":[{"role":"user","content":"how fast can a client read"}],`+
		`"max_tokens":%d,"min_tokens":%d,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`,
		floorTokens, floorTokens)
}

// BenchmarkReadFloor measures what reading the streams costs with nothing
// else done: no SSE framing, no JSON, no records — one clock reading per
// read, as capture takes. It drives the server at
// $BENCHSEAL_BENCH_ENDPOINT (skipped when unset) the way
// BenchmarkCaptureEndpoint does, so the two can be compared run for run:
//
//   - nethttp: net/http as capture uses it (one goroutine per stream,
//     Go's network poller: a read that returns data, a read that returns
//     EAGAIN, then a park until epoll reports the socket again);
//   - epoll: one goroutine over non-blocking sockets with its own
//     level-triggered epoll, one read per ready socket per wake-up and no
//     EAGAIN reads (HTTP/1.1 written and ended by hand; not a client).
//
// Each iteration runs every stream through 2 requests of floorTokens
// chunks. Reported: CPU ms per 1,000 chunks (getrusage: user + sys) and
// reads per 1,000 chunks (reads that returned data).
func BenchmarkReadFloor(b *testing.B) {
	url := os.Getenv("BENCHSEAL_BENCH_ENDPOINT")
	if url == "" {
		b.Skip("BENCHSEAL_BENCH_ENDPOINT not set")
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	for _, mode := range []string{"nethttp", "epoll"} {
		for _, conc := range []int{16, 64, 256, 1024} {
			b.Run(fmt.Sprintf("%s/c%d", mode, conc), func(b *testing.B) {
				var reads, requests int64
				cpu0 := processCPU()
				for b.Loop() {
					var rd, rq int64
					var err error
					if mode == "nethttp" {
						rd, rq, err = floorNetHTTP(addr, conc, 2)
					} else {
						rd, rq, err = floorEpoll(addr, conc, 2)
					}
					if err != nil {
						b.Fatal(err)
					}
					reads += rd
					requests += rq
				}
				cpu := processCPU() - cpu0
				chunks := float64(requests * floorTokens)
				b.ReportMetric(chunks/b.Elapsed().Seconds(), "chunks/s")
				b.ReportMetric(float64(cpu.Microseconds())/chunks, "cpu-ms/1kchunks")
				b.ReportMetric(float64(reads)*1000/chunks, "reads/1kchunks")
			})
		}
	}
}

// floorNetHTTP sends n requests on each of conc streams through net/http
// and reads each body to its end, taking the clock after every read.
func floorNetHTTP(addr string, conc, n int) (reads, requests int64, err error) {
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: conc + 16, DisableCompression: true, ReadBufferSize: 32 << 10}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr}
	var rd, rq atomic.Int64
	var first error
	var mu sync.Mutex
	var wg sync.WaitGroup
	body := floorBody()
	for range conc {
		wg.Go(func() {
			buf := make([]byte, 32<<10)
			var last time.Time
			for range n {
				resp, err := cl.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(body))
				if err == nil && resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("HTTP %s", resp.Status)
				}
				for err == nil {
					var k int
					k, err = resp.Body.Read(buf)
					if k > 0 {
						last = time.Now()
						rd.Add(1)
					}
				}
				if resp != nil {
					resp.Body.Close()
				}
				if err != io.EOF {
					mu.Lock()
					first = cmpErr(first, err)
					mu.Unlock()
					return
				}
				rq.Add(1)
			}
			_ = last
		})
	}
	wg.Wait()
	return rd.Load(), rq.Load(), first
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// floorEpoll sends n requests on each of conc keep-alive connections and
// reads the responses from one goroutine with a level-triggered epoll: a
// response ends with the chunked terminator "\r\n0\r\n\r\n".
func floorEpoll(addr string, conc, n int) (reads, requests int64, err error) {
	ta, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return 0, 0, err
	}
	var sa unix.SockaddrInet4
	copy(sa.Addr[:], ta.IP.To4())
	sa.Port = ta.Port
	body := floorBody()
	req := []byte(fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
		"Accept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body))
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return 0, 0, err
	}
	defer unix.Close(epfd)
	type stream struct {
		fd   int
		left int    // requests still to send after the current one
		tail []byte // the last bytes read, to find the terminator across reads
	}
	streams := map[int32]*stream{}
	defer func() {
		for _, s := range streams {
			unix.Close(s.fd)
		}
	}()
	for range conc {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return 0, 0, err
		}
		streams[int32(fd)] = &stream{fd: fd, left: n - 1}
		if err := unix.Connect(fd, &sa); err != nil {
			return 0, 0, err
		}
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		if _, err := unix.Write(fd, req); err != nil {
			return 0, 0, err
		}
		if err := unix.SetNonblock(fd, true); err != nil {
			return 0, 0, err
		}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
			return 0, 0, err
		}
	}
	end := []byte("\r\n0\r\n\r\n")
	buf := make([]byte, 64<<10)
	evs := make([]unix.EpollEvent, 256)
	var last time.Time
	for active := conc; active > 0; {
		k, err := unix.EpollWait(epfd, evs, 30_000)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return reads, requests, err
		}
		if k == 0 {
			return reads, requests, fmt.Errorf("no data for 30 s")
		}
		for _, ev := range evs[:k] {
			s := streams[ev.Fd]
			m, err := unix.Read(s.fd, buf)
			if err == unix.EAGAIN {
				continue
			}
			if err != nil || m == 0 {
				return reads, requests, fmt.Errorf("read: %v (%d bytes)", err, m)
			}
			last = time.Now()
			reads++
			s.tail = append(s.tail, buf[:m][max(0, m-len(end)):]...)
			s.tail = s.tail[max(0, len(s.tail)-len(end)):]
			if !bytes.Equal(s.tail, end) {
				continue
			}
			requests++
			s.tail = s.tail[:0]
			if s.left == 0 {
				active--
				continue
			}
			s.left--
			if _, err := unix.Write(s.fd, req); err != nil {
				return reads, requests, err
			}
		}
	}
	_ = last
	return reads, requests, nil
}
