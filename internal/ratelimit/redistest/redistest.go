// Package redistest gives tests the real Redis and a way to take it away:
// a TCP proxy in front of it that a test stops and starts, so a test never
// stops the Redis other tests share.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultURL is where tests look for Redis when MATCHPOINT_TEST_REDIS_URL is
// not set.
const DefaultURL = "redis://127.0.0.1:6379/0"

// URL returns the Redis of the tests. With MATCHPOINT_TEST_REDIS_URL set, a
// Redis that does not answer fails the test; without it, the test is skipped
// when none answers at DefaultURL.
func URL(t testing.TB) string {
	t.Helper()
	u, required := os.LookupEnv("MATCHPOINT_TEST_REDIS_URL")
	if !required || u == "" {
		u, required = DefaultURL, false
	}
	opt, err := redis.ParseURL(u)
	if err != nil {
		t.Fatalf("MATCHPOINT_TEST_REDIS_URL: %v", err)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		if required {
			t.Fatalf("Redis at %s: %v", u, err)
		}
		t.Skipf("no Redis at %s (%v); set MATCHPOINT_TEST_REDIS_URL to require one", u, err)
	}
	return u
}

// Prefix returns a key prefix of the test's own and deletes its keys when the
// test ends.
func Prefix(t testing.TB, redisURL string) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "matchpoint-test:" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() {
		opt, _ := redis.ParseURL(redisURL)
		c := redis.NewClient(opt)
		defer c.Close()
		ctx := context.Background()
		iter := c.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	})
	return prefix
}

// Proxy forwards TCP connections to Redis until stopped; Start listens again
// on the same port.
type Proxy struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// NewProxy starts a proxy in front of the Redis at url and returns it with
// the URL that reaches Redis through it. It is stopped when the test ends.
func NewProxy(t testing.TB, redisURL string) (*Proxy, string) {
	t.Helper()
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{target: opt.Addr, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(p.Stop)
	via := &url.URL{Scheme: "redis", Host: p.addr, Path: "/" + strconv.Itoa(opt.DB)}
	if opt.Password != "" {
		via.User = url.UserPassword(opt.Username, opt.Password)
	}
	return p, via.String()
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[up] = struct{}{}, struct{}{}
			p.mu.Unlock()
			pipe := func(dst, src net.Conn) {
				defer p.wg.Done()
				_, _ = io.Copy(dst, src)
				dst.Close()
				src.Close()
			}
			p.wg.Add(2)
			go pipe(up, c)
			go pipe(c, up)
		}
	}()
}

// Stop closes the listener and every connection: Redis is gone for whoever
// used the proxy, connections refused.
func (p *Proxy) Stop() {
	p.mu.Lock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]struct{}{}
	p.mu.Unlock()
	p.wg.Wait()
}

// Start listens again on the proxy's port: Redis is back.
func (p *Proxy) Start(t testing.TB) {
	t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port may linger for a moment after Stop
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("restart proxy on %s: %v", p.addr, err)
	}
	p.serve(ln)
}
