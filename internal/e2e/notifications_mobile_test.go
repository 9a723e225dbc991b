package e2e

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

func jwtParts(t *testing.T, tok string) (hdr, claims map[string]any, input string, sig []byte) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Errorf("not a JWS: %q", tok)
		return nil, nil, "", nil
	}
	h, _ := base64.RawURLEncoding.DecodeString(parts[0])
	c, _ := base64.RawURLEncoding.DecodeString(parts[1])
	_ = json.Unmarshal(h, &hdr)
	_ = json.Unmarshal(c, &claims)
	sig, _ = base64.RawURLEncoding.DecodeString(parts[2])
	return hdr, claims, parts[0] + "." + parts[1], sig
}

// apnsServer is APNs in the test, over HTTP/2 with TLS, checking what
// Apple's provider API documents: POST /3/device/<token>, a bearer ES256
// provider token with kid = key id and iss = team id signed by the .p8 key,
// apns-topic, apns-push-type, and an aps dictionary.
type apnsServer struct {
	t    *testing.T
	srv  *httptest.Server
	pub  *ecdsa.PublicKey
	mu   sync.Mutex
	got  []map[string]any
	gone map[string]bool
}

func (a *apnsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := a.t
	if r.ProtoMajor != 2 {
		t.Errorf("HTTP/%d, APNs takes HTTP/2 only", r.ProtoMajor)
	}
	token, ok := strings.CutPrefix(r.URL.Path, "/3/device/")
	if r.Method != "POST" || !ok {
		t.Errorf("%s %s", r.Method, r.URL.Path)
	}
	bearer, _ := strings.CutPrefix(r.Header.Get("Authorization"), "bearer ")
	hdr, claims, input, sig := jwtParts(t, bearer)
	sum := sha256.Sum256([]byte(input))
	if len(sig) != 64 || !ecdsa.Verify(a.pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		w.WriteHeader(403)
		_, _ = w.Write([]byte(`{"reason":"InvalidProviderToken"}`))
		t.Error("provider token does not verify with the .p8 key")
		return
	}
	if hdr["alg"] != "ES256" || hdr["kid"] != "KEY1234567" || claims["iss"] != "TEAM765432" || claims["iat"] == nil {
		t.Errorf("provider token %v %v", hdr, claims)
	}
	if r.Header.Get("apns-topic") != "com.example.matchpoint" || r.Header.Get("apns-push-type") != "alert" || r.Header.Get("apns-expiration") == "" {
		t.Errorf("headers %v", r.Header)
	}
	var body map[string]any
	raw, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Errorf("body %s", raw)
	}
	body["_token"] = token
	body["_collapse"] = r.Header.Get("apns-collapse-id")
	a.mu.Lock()
	a.got = append(a.got, body)
	gone := a.gone[token]
	a.mu.Unlock()
	w.Header().Set("apns-id", "EC1BF194-B3B2-424A-89A9-5A918A6E6B6C")
	if gone {
		w.WriteHeader(http.StatusGone)
		_, _ = fmt.Fprintf(w, `{"reason":"Unregistered","timestamp":%d}`, time.Now().UnixMilli())
	}
}

// fcmServer is Google in the test: the token endpoint of a service account
// key (JWT bearer grant, RFC 7523) and the FCM v1 send endpoint.
type fcmServer struct {
	t      *testing.T
	srv    *httptest.Server
	pub    *rsa.PublicKey
	mu     sync.Mutex
	token  string
	sends  []map[string]any
	gone   map[string]bool
	grants int
}

func (f *fcmServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := f.t
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.URL.Path {
	case "/token":
		_ = r.ParseForm()
		hdr, claims, input, sig := jwtParts(t, r.Form.Get("assertion"))
		sum := sha256.Sum256([]byte(input))
		if err := rsa.VerifyPKCS1v15(f.pub, crypto.SHA256, sum[:], sig); err != nil || r.Form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
			t.Errorf("grant %v: %v", r.Form, err)
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
			return
		}
		if hdr["alg"] != "RS256" || claims["iss"] != "fcm@matchpoint-e2e.iam.gserviceaccount.com" || claims["aud"] != f.srv.URL+"/token" ||
			claims["scope"] != "https://www.googleapis.com/auth/firebase.messaging" {
			t.Errorf("assertion %v %v", hdr, claims)
		}
		f.grants++
		f.token = fmt.Sprintf("ya29.e2e-%d", f.grants)
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": f.token, "expires_in": 3600, "token_type": "Bearer"})
	case "/v1/projects/matchpoint-e2e/messages:send":
		if r.Header.Get("Authorization") != "Bearer "+f.token || f.token == "" {
			t.Errorf("Authorization %q", r.Header.Get("Authorization"))
			w.WriteHeader(401)
			return
		}
		var body struct {
			Message map[string]any `json:"message"`
		}
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &body); err != nil || body.Message["token"] == nil {
			t.Errorf("send body %s", raw)
		}
		f.sends = append(f.sends, body.Message)
		if tok, _ := body.Message["token"].(string); f.gone[tok] {
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND",` +
				`"details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"name": "projects/matchpoint-e2e/messages/0:1500415314455276%31bd1c9631bd1c96"})
	default:
		t.Errorf("unexpected %s", r.URL.Path)
		http.NotFound(w, r)
	}
}

func writeFile(t *testing.T, name string, b []byte) string {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAPNsAndFCM: with APNs (a .p8 key) and FCM (a service account key)
// configured and pointed at servers in the test, registered device tokens
// receive notifications in each provider's documented shape, the events are
// recorded, and tokens the providers call unregistered are removed.
func TestAPNsAndFCM(t *testing.T) {
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			testAPNsAndFCM(t, d)
		})
	}
}

func testAPNsAndFCM(t *testing.T, d store.Dialect) {
	var apnsSrv *apnsServer
	var fcmSrv *fcmServer
	ca := apptest.CAFile(t, httptestCert(t))
	s := apptest.StartWith(t, d, apptest.Options{Configure: func(c *config.Config, _ *app.Options) {
		c.WebhookCAFile = ca
		ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		der, _ := x509.MarshalPKCS8PrivateKey(ek)
		apnsSrv = &apnsServer{t: t, pub: &ek.PublicKey, gone: map[string]bool{}}
		apnsSrv.srv = httptest.NewUnstartedServer(apnsSrv)
		apnsSrv.srv.EnableHTTP2 = true
		apnsSrv.srv.StartTLS()
		t.Cleanup(apnsSrv.srv.Close)
		c.APNsKeyFile = writeFile(t, "AuthKey_KEY1234567.p8", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
		c.APNsKeyID, c.APNsTeamID, c.APNsTopic, c.APNsURL = "KEY1234567", "TEAM765432", "com.example.matchpoint", apnsSrv.srv.URL

		rk, _ := rsa.GenerateKey(rand.Reader, 2048)
		rder, _ := x509.MarshalPKCS8PrivateKey(rk)
		fcmSrv = &fcmServer{t: t, pub: &rk.PublicKey, gone: map[string]bool{}}
		fcmSrv.srv = httptest.NewTLSServer(fcmSrv)
		t.Cleanup(fcmSrv.srv.Close)
		creds, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "matchpoint-e2e", "private_key_id": "k1",
			"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: rder})),
			"client_email": "fcm@matchpoint-e2e.iam.gserviceaccount.com", "token_uri": fcmSrv.srv.URL + "/token"})
		c.FCMCredentialsFile = writeFile(t, "service-account.json", creds)
		c.FCMURL = fcmSrv.srv.URL + "/v1/projects/matchpoint-e2e/messages:send"
	}})
	{
		if st := settings(t, s, s.Key(t, s.User(t, "probe"), "read"), "GET", ""); strings.Join(st.PushPlatforms, ",") != "webpush,apns,fcm" {
			t.Fatalf("platforms %v", st.PushPlatforms)
		}
		nina := s.User(t, "nina")
		key := s.Key(t, nina, "read", "write")
		apnsToken := strings.Repeat("a1b2c3d4", 8)
		fcmToken := "dGVzdC1mY20tcmVnaXN0cmF0aW9uLXRva2Vu:APA91bE" + strings.Repeat("x", 100)
		r := api(t, s, "POST", "/v1/users/me/devices", key, `{"platform":"apns","token":"`+strings.ToUpper(apnsToken)+`","name":"iPhone"}`)
		if r.Status != 201 || str(r.JSON(t), "token_hint") != "…"+apnsToken[len(apnsToken)-8:] {
			t.Fatalf("apns: %d %s", r.Status, r.Body)
		}
		apnsDev := str(r.JSON(t), "id")
		if r = api(t, s, "POST", "/v1/users/me/devices", key, `{"platform":"fcm","token":"`+fcmToken+`","name":"Pixel"}`); r.Status != 201 {
			t.Fatalf("fcm: %d %s", r.Status, r.Body)
		}
		fcmDev := str(r.JSON(t), "id")

		n := s.Notify(t, nina.ID, notify.KindMessage, "Ann sent you a message", "Tennis at 6?", "conversation:cnv_7", map[string]string{"conversation_id": "cnv_7"})
		if sent := s.SendNotifications(t); sent != 2 {
			t.Fatalf("%d sent, want one per device", sent)
		}
		if len(apnsSrv.got) != 1 || len(fcmSrv.sends) != 1 {
			t.Fatalf("apns %d, fcm %d", len(apnsSrv.got), len(fcmSrv.sends))
		}
		a := apnsSrv.got[0]
		alert := a["aps"].(map[string]any)["alert"].(map[string]any)
		if a["_token"] != apnsToken || alert["title"] != "Ann sent you a message" || alert["body"] != "Tennis at 6?" || a["notification_id"] != n.ID ||
			a["_collapse"] != "conversation:cnv_7" {
			t.Errorf("apns request %v", a)
		}
		f := fcmSrv.sends[0]
		fn, _ := f["notification"].(map[string]any)
		fd, _ := f["data"].(map[string]any)
		if f["token"] != fcmToken || fn["title"] != "Ann sent you a message" || fd["notification_id"] != n.ID || fd["conversation_id"] != "cnv_7" {
			t.Errorf("fcm message %v", f)
		}
		evs := notificationEvents(t, s)
		byDevice := map[string][]string{}
		for _, ev := range evs {
			d := ev.delivery()
			byDevice[d["platform"].(string)+" "+d["device_id"].(string)] = append(byDevice[d["platform"].(string)+" "+d["device_id"].(string)], ev.Type)
		}
		for _, k := range []string{"apns " + apnsDev, "fcm " + fcmDev} {
			if got := byDevice[k]; len(got) != 2 || got[0] != outbox.NotificationSent || got[1] != outbox.NotificationDelivered {
				t.Errorf("%s events %v", k, got)
			}
		}

		// Both providers report the tokens unregistered: both are removed.
		apnsSrv.gone[apnsToken], fcmSrv.gone[fcmToken] = true, true
		s.Notify(t, nina.ID, notify.KindMatchRequested, "Bob wants to play", "", "", nil)
		s.SendNotifications(t)
		if r := api(t, s, "GET", "/v1/users/me/devices", key, ""); len(r.JSON(t)["data"].([]any)) != 0 {
			t.Errorf("unregistered tokens kept: %s", r.Body)
		}
		if fcmSrv.grants != 1 {
			t.Errorf("%d access tokens fetched, want the first reused", fcmSrv.grants)
		}
	}
}
