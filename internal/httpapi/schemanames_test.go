package httpapi

import (
	"reflect"
	"testing"
)

func TestSchemaName(t *testing.T) {
	anonymous := reflect.TypeOf(struct{ Name string }{})
	for hint, want := range map[string]string{
		"create-api-keyRequest":       "CreateAPIKeyRequest",
		"request-verificationRequest": "RequestVerificationRequest",
		"get-user-idResponse":         "GetUserIDResponse",
		"revoke_oauth_grantRequest":   "RevokeOAuthGrantRequest",
		"ProfilePatch":                "ProfilePatch",
	} {
		if got := schemaName(anonymous, hint); got != want {
			t.Errorf("schemaName(%q) = %q, want %q", hint, got, want)
		}
	}
	if got := schemaName(reflect.TypeOf(APIKey{}), "create-api-keyResponse"); got != "APIKey" {
		t.Errorf("a named type is named %q, want APIKey", got)
	}
	if got := schemaName(reflect.TypeOf(List[APIKey]{}), ""); got != "ListAPIKey" {
		t.Errorf("List[APIKey] is named %q", got)
	}
}
