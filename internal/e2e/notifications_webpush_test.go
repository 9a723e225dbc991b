package e2e

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// pushService is a Web Push service in the test: it accepts messages for
// the subscriptions it made, checks the VAPID authorization (RFC 8292) the
// way a push service must, and decrypts each payload as the browser would
// (RFC 8291), with its own implementation, not the service's.
type pushService struct {
	t     *testing.T
	srv   *httptest.Server
	vapid string // the application server key subscriptions are made with (base64url)
	now   func() time.Time

	mu       sync.Mutex
	delay    time.Duration       // before each answer (a slow push service)
	subs     map[string]*browser // by path
	answers  map[string][]pushAnswer
	received []pushed
}

// browser is one subscription: the browser's key pair and auth secret.
type browser struct {
	path string
	key  *ecdh.PrivateKey
	auth []byte
}

type pushAnswer struct {
	status     int
	retryAfter string
}

// pushed is a message the service accepted, decrypted.
type pushed struct {
	Path    string
	Header  http.Header
	Payload map[string]any
	Status  int // what the service answered
}

func newPushService(t *testing.T, now func() time.Time) *pushService {
	p := &pushService{t: t, subs: map[string]*browser{}, answers: map[string][]pushAnswer{}, now: now}
	p.srv = httptest.NewUnstartedServer(p)
	p.srv.EnableHTTP2 = true
	p.srv.StartTLS()
	t.Cleanup(p.srv.Close)
	return p
}

// subscribe makes a subscription as PushManager.subscribe() would.
func (p *pushService) subscribe(name string) *browser {
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		p.t.Fatal(err)
	}
	auth := make([]byte, 16)
	_, _ = rand.Read(auth)
	b := &browser{path: "/wpush/v2/" + name, key: k, auth: auth}
	p.mu.Lock()
	p.subs[b.path] = b
	p.mu.Unlock()
	return b
}

// json is the subscription as PushSubscription.toJSON() gives it.
func (p *pushService) json(b *browser) string {
	enc := base64.RawURLEncoding
	return fmt.Sprintf(`{"endpoint":%q,"expirationTime":null,"keys":{"p256dh":%q,"auth":%q}}`,
		p.srv.URL+b.path, enc.EncodeToString(b.key.PublicKey().Bytes()), enc.EncodeToString(b.auth))
}

// answer queues answers for a subscription's next messages (201 after them).
func (p *pushService) answer(b *browser, as ...pushAnswer) {
	p.mu.Lock()
	p.answers[b.path] = append(p.answers[b.path], as...)
	p.mu.Unlock()
}

func (p *pushService) messages() []pushed {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]pushed(nil), p.received...)
}

func (p *pushService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := p.t
	p.mu.Lock()
	b := p.subs[r.URL.Path]
	p.mu.Unlock()
	if r.Method != http.MethodPost || b == nil {
		http.NotFound(w, r)
		return
	}
	if err := p.checkVAPID(r); err != nil {
		t.Errorf("VAPID: %v", err)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	for _, h := range []string{"TTL", "Urgency"} {
		if r.Header.Get(h) == "" {
			t.Errorf("no %s header", h)
		}
	}
	if ttl, err := strconv.Atoi(r.Header.Get("TTL")); err != nil || ttl <= 0 || ttl > 86400 {
		t.Errorf("TTL %q", r.Header.Get("TTL"))
	}
	if r.Header.Get("Content-Encoding") != "aes128gcm" {
		t.Errorf("Content-Encoding %q", r.Header.Get("Content-Encoding"))
	}
	body, _ := io.ReadAll(r.Body)
	plain, err := decryptRFC8291(b, body)
	if err != nil {
		t.Errorf("decrypt: %v", err)
		http.Error(w, "bad payload", http.StatusBadRequest)
		return
	}
	var payload map[string]any
	if err := json.Unmarshal(plain, &payload); err != nil {
		t.Errorf("payload %q: %v", plain, err)
	}
	p.mu.Lock()
	a := pushAnswer{status: http.StatusCreated}
	if q := p.answers[b.path]; len(q) > 0 {
		a, p.answers[b.path] = q[0], q[1:]
	}
	p.received = append(p.received, pushed{Path: b.path, Header: r.Header.Clone(), Payload: payload, Status: a.status})
	delay := p.delay
	p.mu.Unlock()
	time.Sleep(delay)
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	if a.status == http.StatusCreated {
		w.Header().Set("Location", p.srv.URL+"/message/1")
	}
	w.WriteHeader(a.status)
}

// checkVAPID verifies "Authorization: vapid t=<jwt>, k=<key>" (RFC 8292 3):
// k is the key the subscription was made with, the ES256 signature
// verifies with it, aud is this service's origin, exp is in the future and
// at most 24 hours away, and sub is a mailto: or https: contact.
func (p *pushService) checkVAPID(r *http.Request) error {
	auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "vapid ")
	if !ok {
		return fmt.Errorf("Authorization %q is not vapid", r.Header.Get("Authorization"))
	}
	params := map[string]string{}
	for _, part := range strings.Split(auth, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		params[k] = v
	}
	if params["k"] != p.vapid {
		return fmt.Errorf("k = %q, subscriptions were made with %q", params["k"], p.vapid)
	}
	raw, err := base64.RawURLEncoding.DecodeString(params["k"])
	if err != nil {
		return err
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
	if err != nil {
		return err
	}
	parts := strings.Split(params["t"], ".")
	if len(parts) != 3 {
		return fmt.Errorf("t is not a JWS")
	}
	var hdr map[string]string
	var claims struct {
		Aud string `json:"aud"`
		Exp int64  `json:"exp"`
		Sub string `json:"sub"`
	}
	h, _ := base64.RawURLEncoding.DecodeString(parts[0])
	c, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if json.Unmarshal(h, &hdr) != nil || json.Unmarshal(c, &claims) != nil || hdr["alg"] != "ES256" {
		return fmt.Errorf("header %s claims %s", h, c)
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return fmt.Errorf("signature does not verify")
	}
	if claims.Aud != p.srv.URL {
		return fmt.Errorf("aud %q, want this push service's origin %q", claims.Aud, p.srv.URL)
	}
	exp := time.Unix(claims.Exp, 0)
	if now := p.now(); !exp.After(now) || exp.Sub(now) > 24*time.Hour {
		return fmt.Errorf("exp %v is not within 24 h after %v", exp, now)
	}
	if !strings.HasPrefix(claims.Sub, "mailto:") && !strings.HasPrefix(claims.Sub, "https:") {
		return fmt.Errorf("sub %q", claims.Sub)
	}
	return nil
}

// decryptRFC8291 is the browser's side of RFC 8291 (and RFC 8188): read the
// header, derive the key from the browser's private key and auth secret,
// open every record and strip the padding.
func decryptRFC8291(b *browser, body []byte) ([]byte, error) {
	if len(body) < 21 {
		return nil, fmt.Errorf("body of %d bytes", len(body))
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if idlen != 65 || len(body) < 21+idlen || rs < 18 {
		return nil, fmt.Errorf("header: rs %d idlen %d", rs, idlen)
	}
	asPublic := body[21 : 21+idlen]
	records := body[21+idlen:]
	as, err := ecdh.P256().NewPublicKey(asPublic)
	if err != nil {
		return nil, err
	}
	shared, err := b.key.ECDH(as)
	if err != nil {
		return nil, err
	}
	uaPublic := b.key.PublicKey().Bytes()
	ikm, err := hkdf.Key(sha256.New, shared, b.auth, "WebPush: info\x00"+string(uaPublic)+string(asPublic), 32)
	if err != nil {
		return nil, err
	}
	cek, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, err
	}
	baseNonce, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, err
	}
	block, _ := aes.NewCipher(cek)
	gcm, _ := cipher.NewGCM(block)
	var out []byte
	for seq := uint64(0); len(records) > 0; seq++ {
		n := min(int(rs), len(records))
		rec := records[:n]
		records = records[n:]
		nonce := append([]byte(nil), baseNonce...)
		x := binary.BigEndian.Uint64(nonce[4:]) ^ seq
		binary.BigEndian.PutUint64(nonce[4:], x)
		plain, err := gcm.Open(nil, nonce, rec, nil)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", seq, err)
		}
		// Padding: the data, a delimiter (2 in the last record, 1 before),
		// then zeros.
		i := len(plain) - 1
		for i >= 0 && plain[i] == 0 {
			i--
		}
		if i < 0 || (plain[i] != 2 && len(records) == 0) || (plain[i] != 1 && len(records) > 0) {
			return nil, fmt.Errorf("record %d: bad padding delimiter", seq)
		}
		out = append(out, plain[:i]...)
	}
	return out, nil
}

// encodeKeys are a subscription's keys as the browser gives them.
func encodeKeys(b *browser) (p256dh, auth string) {
	enc := base64.RawURLEncoding
	return enc.EncodeToString(b.key.PublicKey().Bytes()), enc.EncodeToString(b.auth)
}
