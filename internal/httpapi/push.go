package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// VAPIDPublicKey is the application server key of Web Push.
type VAPIDPublicKey struct {
	Object    string `json:"object" enum:"vapid_public_key"`
	PublicKey string `json:"public_key" example:"BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8" doc:"Uncompressed P-256 point, base64url: pass it as applicationServerKey to PushManager.subscribe()"`
}

func (s *server) registerPush() {
	huma.Register(s.api, huma.Operation{
		OperationID: "get-vapid-public-key", Method: http.MethodGet, Path: "/v1/push/vapid-public-key", Tags: []string{"Notifications"},
		Summary: "The Web Push public key",
		Description: "The VAPID key (RFC 8292) a browser subscribes with before the subscription is registered with register-device. " +
			"It is made once per deployment and kept, so subscriptions stay valid. Public: a web page needs it before anyone signs in.",
		Metadata: public(),
	}, func(ctx context.Context, _ *struct{}) (*struct{ Body VAPIDPublicKey }, error) {
		return &struct{ Body VAPIDPublicKey }{Body: VAPIDPublicKey{Object: "vapid_public_key", PublicKey: s.notifications.VAPIDPublicKey()}}, nil
	})
}
