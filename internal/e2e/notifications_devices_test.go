package e2e

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
)

// webPushBody is a register-device body for a fresh subscription at endpoint.
func webPushBody(endpoint string) string {
	k, _ := ecdh.P256().GenerateKey(rand.Reader)
	auth := make([]byte, 16)
	_, _ = rand.Read(auth)
	enc := base64.RawURLEncoding
	return fmt.Sprintf(`{"platform":"webpush","subscription":{"endpoint":%q,"expirationTime":null,"keys":{"p256dh":%q,"auth":%q}}}`,
		endpoint, enc.EncodeToString(k.PublicKey().Bytes()), enc.EncodeToString(auth))
}

// TestDevices: registering, refreshing, moving, capping, listing and
// removing push devices, and every refusal naming its field.
func TestDevices(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		nina, omar := s.User(t, "nina"), s.User(t, "omar")
		key, okey := s.Key(t, nina, "read", "write"), s.Key(t, omar, "read", "write")
		const ep = "https://push.example.net/wpush/v2/abc"

		r := api(t, s, "POST", "/v1/users/me/devices", key, webPushBody(ep))
		if r.Status != 201 || str(r.JSON(t), "push_service") != "https://push.example.net" || str(r.JSON(t), "object") != "device" {
			t.Fatalf("register: %d %s", r.Status, r.Body)
		}
		id := str(r.JSON(t), "id")
		// The same subscription again (new keys): same device.
		if r = api(t, s, "POST", "/v1/users/me/devices", key, webPushBody(ep)); str(r.JSON(t), "id") != id {
			t.Errorf("re-registration made a new device: %s", r.Body)
		}
		// Omar signs in on the same browser: the device is his now.
		if r = api(t, s, "POST", "/v1/users/me/devices", okey, webPushBody(ep)); r.Status != 201 || str(r.JSON(t), "id") == id {
			t.Fatalf("moved: %d %s", r.Status, r.Body)
		}
		if l := api(t, s, "GET", "/v1/users/me/devices", key, ""); len(l.JSON(t)["data"].([]any)) != 0 {
			t.Errorf("Nina still has Omar's browser: %s", l.Body)
		}
		omarDev := str(r.JSON(t), "id")
		wantProblem(t, s, api(t, s, "DELETE", "/v1/users/me/devices/"+omarDev, key, ""), 404, "not_found", "")

		// At most 20 devices: the least recently used goes.
		var ids []string
		for i := range 21 {
			s.Clock.Advance(time.Second)
			r := api(t, s, "POST", "/v1/users/me/devices", key, webPushBody(fmt.Sprintf("https://push.example.net/wpush/v2/n%d", i)))
			if r.Status != 201 {
				t.Fatalf("device %d: %d %s", i, r.Status, r.Body)
			}
			ids = append(ids, str(r.JSON(t), "id"))
		}
		var seen []string
		cursor := ""
		for {
			r := api(t, s, "GET", "/v1/users/me/devices?limit=7&cursor="+cursor, key, "")
			page := r.JSON(t)
			for _, d := range page["data"].([]any) {
				seen = append(seen, str(d.(map[string]any), "id"))
			}
			if page["has_more"] != true {
				break
			}
			cursor = str(page, "next_cursor")
		}
		if len(seen) != 20 || seen[0] != ids[1] || seen[19] != ids[20] {
			t.Errorf("after 21 registrations: %d devices, first %s (want %s)", len(seen), seen[0], ids[1])
		}
		if r := api(t, s, "DELETE", "/v1/users/me/devices/"+ids[5], key, ""); r.Status != 204 {
			t.Errorf("delete: %d %s", r.Status, r.Body)
		}
		wantProblem(t, s, api(t, s, "DELETE", "/v1/users/me/devices/"+ids[5], key, ""), 404, "not_found", "")

		good := webPushBody(ep)
		for body, want := range map[string][2]string{
			`{"platform":"sms","token":"x"}`:                  {"validation_failed", "platform"},
			`{"platform":"webpush"}`:                          {"invalid_subscription", "subscription"},
			webPushBody("http://push.example.net/x"):          {"invalid_endpoint", "subscription.endpoint"},
			webPushBody("https://127.0.0.1/x"):                {"invalid_endpoint", "subscription.endpoint"},
			webPushBody("https://user:pw@push.example.net/x"): {"invalid_endpoint", "subscription.endpoint"},
			webPushBody("not a url"):                          {"invalid_endpoint", "subscription.endpoint"},
			good[:len(good)-3] + `,"p256dh":"AAAA"}}}`:        {"invalid_subscription_key", "subscription.keys.p256dh"},
			`{"platform":"webpush","subscription":{"endpoint":"` + ep + `","keys":{"p256dh":"BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4","auth":"c2hvcnQ"}}}`: {"invalid_subscription_key", "subscription.keys.auth"},
			`{"platform":"apns","token":"a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"}`:                                                                                               {"push_unavailable", "platform"},
			`{"platform":"fcm","token":"abcdefghijklmnopqrstuvwxyz"}`:                                                                                                                                      {"push_unavailable", "platform"},
			`{"platform":"webpush","token":"x","subscription":{"endpoint":"` + ep + `","keys":{"p256dh":"a","auth":"b"}}}`:                                                                                 {"unexpected_field", "token"},
			`{"platform":"webpush","name":"a\u0007b","subscription":{"endpoint":"` + ep + `","keys":{"p256dh":"a","auth":"b"}}}`:                                                                           {"invalid_text", "name"},
		} {
			r := api(t, s, "POST", "/v1/users/me/devices", key, body)
			p := r.JSON(t)
			if r.Status != 422 || p["code"] != want[0] || p["param"] != want[1] {
				t.Errorf("%s: %d %s, want %v", body, r.Status, r.Body, want)
			}
		}
		wantProblem(t, s, api(t, s, "POST", "/v1/users/me/devices", s.Key(t, nina, "read"), good), 403, "insufficient_scope", "")
		wantProblem(t, s, api(t, s, "GET", "/v1/users/me/devices?cursor=nope", key, ""), 422, "invalid_cursor", "cursor")
	})
}
