package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/web"
)

// openAPIDocument serves the OpenAPI 3.1 document Huma builds from the
// registered operations, plus the OAuth endpoints, which are plain handlers.
func (s *server) openAPIDocument() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := json.MarshalIndent(s.api.OpenAPI(), "", "  ")
		if err != nil {
			s.problems.writeErr(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.oai.openapi+json;version=3.1")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_, _ = w.Write(b)
	})
}

// problemCodes are the codes of /v1 problem responses, for the error reference.
var problemCodes = []web.ErrorCode{
	{Code: "unauthenticated", Status: 401, Meaning: "No credentials were sent. Send Authorization: Bearer <access token or API key>."},
	{Code: "invalid_token", Status: 401, Meaning: "The access token or API key is invalid, expired or revoked. The WWW-Authenticate header says which; refresh the access token or use another key."},
	{Code: "insufficient_scope", Status: 403, Meaning: "The credential lacks every scope the operation accepts. The WWW-Authenticate header lists them."},
	{Code: "forbidden", Status: 403, Meaning: "The account may not do this, whatever the scopes (for example, an operation reserved to operators)."},
	{Code: "not_found", Status: 404, Meaning: "The resource does not exist, or the caller may not know that it does."},
	{Code: "method_not_allowed", Status: 405, Meaning: "The path exists but not with this method; see the Allow header."},
	{Code: "invalid_string", Status: 400, Meaning: "A string of the path, the query or the JSON body (param names it) is not valid UTF-8 or holds a NUL character."},
	{Code: "invalid_json", Status: 400, Meaning: "The body is not valid JSON."},
	{Code: "invalid_request", Status: 400, Meaning: "The request is malformed in another way (a parameter that cannot be parsed, an unreadable body)."},
	{Code: "invalid_idempotency_key", Status: 400, Meaning: "The Idempotency-Key header must be 1 to 255 printable ASCII characters, sent once."},
	{Code: "unsupported_media_type", Status: 415, Meaning: "The body is not application/json."},
	{Code: "body_too_large", Status: 413, Meaning: "The body is larger than 1 MiB."},
	{Code: "unknown_field", Status: 422, Meaning: "The body has a field the operation does not know; param names it."},
	{Code: "validation_failed", Status: 422, Meaning: "A field has the wrong type or is out of bounds; param names the first, errors lists all."},
	{Code: "invalid_email", Status: 422, Meaning: "The email address is not a plain address like name@example.com."},
	{Code: "invalid_username", Status: 422, Meaning: "Usernames are 3 to 30 letters, digits, '.', '_' or '-', starting with a letter or digit."},
	{Code: "username_reserved", Status: 422, Meaning: "The username is reserved for the service."},
	{Code: "invalid_password", Status: 422, Meaning: "Passwords are 12 to 256 characters, do not contain the username or email, and are not on the list of common and breached passwords."},
	{Code: "unknown_sport", Status: 422, Meaning: "The sport is not on the list served at GET /v1/sports."},
	{Code: "sport_not_in_profile", Status: 422, Meaning: "A skill level names a sport that is not among the profile's sports."},
	{Code: "invalid_skill_level", Status: 422, Meaning: "Skill levels are beginner, intermediate, advanced or expert."},
	{Code: "incomplete_coordinates", Status: 422, Meaning: "latitude and longitude are set (or cleared) together."},
	{Code: "out_of_range", Status: 422, Meaning: "A number is outside its bounds (latitude -90..90, longitude -180..180, travel_radius_km more than 0 and at most 1000)."},
	{Code: "invalid_timezone", Status: 422, Meaning: "The time zone is not an IANA name like Europe/Paris."},
	{Code: "invalid_day", Status: 422, Meaning: "Availability days are monday to sunday."},
	{Code: "invalid_time", Status: 422, Meaning: "Availability times are HH:MM, and a slot ends after it starts."},
	{Code: "invalid_visibility", Status: 422, Meaning: "profile_visibility is members, matches or private."},
	{Code: "invalid_text", Status: 422, Meaning: "Text holds control characters, bidirectional override characters, or line breaks where none are allowed."},
	{Code: "invalid_id", Status: 422, Meaning: "A list of ids holds an empty one; param names the list."},
	{Code: "too_long", Status: 422, Meaning: "Text is longer than its limit."},
	{Code: "too_many", Status: 422, Meaning: "A list is longer than its limit."},
	{Code: "invalid_name", Status: 422, Meaning: "Names of keys and clients are 1 to 100 characters."},
	{Code: "invalid_scope", Status: 422, Meaning: "A scope is unknown, needs an Enterprise account (admin), or is beyond the calling credential's own."},
	{Code: "invalid_document_type", Status: 422, Meaning: "Verification documents are passport, national_id, driving_licence or residence_permit."},
	{Code: "invalid_status", Status: 422, Meaning: "The status filter is not one the list knows."},
	{Code: "invalid_cursor", Status: 422, Meaning: "The cursor is not one this list returned."},
	{Code: "invalid_granularity", Status: 422, Meaning: "An analytics report's granularity is hour or day (platform metrics: day)."},
	{Code: "invalid_group_by", Status: 422, Meaning: "A usage report is grouped by operation or credential."},
	{Code: "invalid_range", Status: 422, Meaning: "A report's from must be before its to."},
	{Code: "range_too_long", Status: 422, Meaning: "A report covers at most 744 hours or 366 days."},
	{Code: "invalid_api_key", Status: 422, Meaning: "The dashboard's webhook form names one of your live API keys."},
	{Code: "public_client", Status: 422, Meaning: "A public client has no secret to rotate."},
	{Code: "invalid_last_event_id", Status: 400, Meaning: "Last-Event-ID (or last_event_id) of GET /v1/stream is not the id of a stream event: send the id of the last event received, or nothing."},
	{Code: "location_required", Status: 422, Meaning: "Matching needs your position: set location (a place name) or latitude and longitude on your profile."},
	{Code: "sports_required", Status: 422, Meaning: "A match search needs sports: send them, or add sports to your profile."},
	{Code: "cannot_match_self", Status: 422, Meaning: "A match request names yourself."},
	{Code: "no_common_sport", Status: 422, Meaning: "You and the person asked have no sport in common."},
	{Code: "sport_not_shared", Status: 422, Meaning: "The sport of a match request is not one you both play."},
	{Code: "invalid_role", Status: 422, Meaning: "The role filter of the match history is sent or received."},
	{Code: "cannot_block_self", Status: 422, Meaning: "You cannot block yourself."},
	{Code: "not_invited", Status: 403, Meaning: "Only the person invited accepts or declines a match request."},
	{Code: "not_requester", Status: 403, Meaning: "Only the person who sent a match request cancels it."},
	{Code: "match_exists", Status: 409, Meaning: "A pending or accepted match between you and this person exists already."},
	{Code: "recently_declined", Status: 409, Meaning: "A match between you and this person was declined less than 30 days ago."},
	{Code: "match_not_pending", Status: 409, Meaning: "The match was already accepted, declined, cancelled or has expired."},
	{Code: "unknown_notification_kind", Status: 422, Meaning: "A notification setting names a kind that does not exist; param names it (kinds.<kind>). GET /v1/users/me/notification-settings lists every kind."},
	{Code: "invalid_quiet_hours", Status: 422, Meaning: "Quiet hours are a start and an end, HH:MM from 00:00 to 23:59, and not the same time."},
	{Code: "invalid_notification_id", Status: 422, Meaning: "up_to is not the id of one of your notifications."},
	{Code: "invalid_unsubscribe_token", Status: 422, Meaning: "The unsubscribe link is damaged or its account is gone; change email settings in the app instead."},
	{Code: "invalid_platform", Status: 422, Meaning: "Push platforms are webpush, apns and fcm."},
	{Code: "push_unavailable", Status: 422, Meaning: "This deployment does not send to that push platform (its credentials are not configured); push_platforms of the notification settings lists those it does."},
	{Code: "invalid_subscription", Status: 422, Meaning: "A Web Push device is registered with its subscription (endpoint and keys), as PushSubscription.toJSON() gives it."},
	{Code: "invalid_endpoint", Status: 422, Meaning: "A Web Push endpoint is an absolute https URL of at most 2048 characters, without credentials or fragment, that does not point at a private, loopback or reserved address."},
	{Code: "invalid_subscription_key", Status: 422, Meaning: "p256dh is an uncompressed P-256 public key and auth a 16-byte secret, both base64url."},
	{Code: "invalid_device_token", Status: 422, Meaning: "An APNs device token is hex (64 characters or more); an FCM registration token is printable ASCII."},
	{Code: "unexpected_field", Status: 422, Meaning: "The field does not belong with this platform: a subscription is for webpush, a token for apns and fcm."},
	// Sports events.
	{Code: "date_in_past", Status: 422, Meaning: "An event's date must be in the future."},
	{Code: "date_too_far", Status: 422, Meaning: "An event must start within two years."},
	{Code: "end_before_start", Status: 422, Meaning: "end_date must be after date."},
	{Code: "invalid_duration", Status: 422, Meaning: "An event lasts at most 7 days."},
	{Code: "invalid_skill_range", Status: 422, Meaning: "skill_max is below skill_min."},
	{Code: "invalid_recurrence", Status: 422, Meaning: "recurrence is not an RRULE of the supported subset: FREQ=DAILY or WEEKLY, INTERVAL, BYDAY (plain weekdays), and COUNT or UNTIL, at most 100 occurrences within two years."},
	{Code: "invalid_query", Status: 422, Meaning: "q must hold at least one word, at most 10 words and 200 characters."},
	{Code: "invalid_sort", Status: 422, Meaning: "sort is start_time, distance (with a place) or relevance (with q)."},
	{Code: "invalid_date_range", Status: 422, Meaning: "to must be after from (which defaults to now)."},
	{Code: "location_required", Status: 422, Meaning: "The operation needs a place: coordinates in your profile (recommendations), or latitude and longitude or near (radius_km)."},
	{Code: "coordinates_required", Status: 422, Meaning: "This server cannot place labels: send latitude and longitude instead of near."},
	{Code: "unknown_place", Status: 422, Meaning: "near names no place the service knows; send latitude and longitude."},
	{Code: "unknown_user", Status: 422, Meaning: "A user id names no user you can invite; param says which."},
	{Code: "not_attending", Status: 422, Meaning: "Only someone who answered going, waitlisted or maybe can be checked in."},
	{Code: "not_event_creator", Status: 403, Meaning: "Only the event's creator may do this."},
	{Code: "event_cancelled", Status: 409, Meaning: "The event is cancelled."},
	{Code: "event_started", Status: 409, Meaning: "The event has started: it can no longer be changed, cancelled or answered."},
	{Code: "event_ended", Status: 409, Meaning: "The event is over."},
	{Code: "capacity_below_going", Status: 409, Meaning: "max_participants cannot be lower than the number of people going."},
	{Code: "not_a_series", Status: 409, Meaning: "The event does not recur; change or cancel it on its own."},
	{Code: "check_in_closed", Status: 409, Meaning: "Check-ins are recorded from the start of the event until 24 hours after its end."},
	// Messaging.
	{Code: "direct_needs_one", Status: 422, Meaning: "A conversation without a title is direct: member_ids names exactly one other person. Give a title for a group."},
	{Code: "unknown_message", Status: 422, Meaning: "reply_to or message_id is not a message of this conversation that you can read."},
	{Code: "not_admin", Status: 403, Meaning: "Only an admin of the group may do this."},
	{Code: "not_sender", Status: 403, Meaning: "Only the sender of a message may edit or delete it."},
	{Code: "conversation_blocked", Status: 403, Meaning: "You cannot message this person."},
	{Code: "not_a_group", Status: 409, Meaning: "The operation applies to group conversations only (a direct conversation has no title, admins or members to change, and cannot be left)."},
	{Code: "last_admin", Status: 409, Meaning: "A group keeps at least one admin: make someone else admin first."},
	{Code: "not_going", Status: 403, Meaning: "Only a sports event's creator and the people going are in its conversation."},
	{Code: "event_conversation", Status: 409, Meaning: "An event's conversation has the event's creator and the people going: its members change with their answers, not by hand."},
	{Code: "message_deleted", Status: 409, Meaning: "The message was deleted."},
	{Code: "email_taken", Status: 409, Meaning: "An account with this email already exists."},
	{Code: "username_taken", Status: 409, Meaning: "The username is taken."},
	{Code: "already_verified", Status: 409, Meaning: "The account is already verified."},
	{Code: "verification_pending", Status: 409, Meaning: "A verification request is already pending."},
	{Code: "already_reviewed", Status: 409, Meaning: "The verification request was already approved or rejected."},
	// Safety and moderation.
	{Code: "content_blocked", Status: 422, Meaning: "The moderation engine refused the text: detail says why, flagged lists the categories, param the field. Nothing was saved."},
	{Code: "account_suspended", Status: 403, Meaning: "The account is suspended: every credential is refused until suspended_until (absent: until an operator lifts it). Reading your decisions and appealing them still work."},
	{Code: "cannot_report_self", Status: 422, Meaning: "You cannot report yourself or what you wrote."},
	{Code: "already_reported", Status: 409, Meaning: "You already reported this target and its case is still open."},
	{Code: "case_closed", Status: 409, Meaning: "The moderation case was already decided."},
	{Code: "same_operator", Status: 403, Meaning: "An appeal is resolved by another operator than the one who made the decision."},
	{Code: "already_appealed", Status: 409, Meaning: "The decision was already appealed."},
	{Code: "appeal_window_closed", Status: 409, Meaning: "A decision may be appealed within 6 months."},
	{Code: "not_appealable", Status: 409, Meaning: "A dismissal or a release takes nothing from you and cannot be appealed."},
	{Code: "idempotency_key_reused", Status: 409, Meaning: "The Idempotency-Key was used with a different request. Use a new key for a new request."},
	{Code: "idempotency_in_progress", Status: 409, Meaning: "A request with this Idempotency-Key is still running. Retry after the Retry-After header's seconds; a claim with no answer for a minute is taken over."},
	{Code: "invalid_role", Status: 422, Meaning: "Roles are member or operator; the system role is never accepted."},
	{Code: "invalid_tier", Status: 422, Meaning: "Tiers are free, pro, business or enterprise."},
	{Code: "invalid_limit", Status: 422, Meaning: "A custom hourly limit is a positive number of requests."},
	{Code: "invalid_redirect_uri", Status: 422, Meaning: "Redirect URIs are absolute https URIs, http on loopback, or private-use schemes, registered in full (1 to 20 of them)."},
	{Code: "invalid_grant_type", Status: 422, Meaning: "A client's grant types are authorization_code and refresh_token."},
	{Code: "invalid_credentials", Status: 401, Meaning: "The sign-in name or password is wrong (sign-in page)."},
	{Code: "rate_limited", Status: 429, Meaning: "The paying account (or, without a valid credential, the client IP) has spent its hourly allowance. Wait for Retry-After seconds; the RateLimit and X-RateLimit-* headers of every response show what is left."},
	{Code: "too_many_attempts", Status: 429, Meaning: "Too many failed sign-ins; wait for Retry-After seconds (sign-in page)."},
	{Code: "request_cancelled", Status: 499, Meaning: "The client closed the connection before the answer; seen in logs and metrics only."},
	{Code: "idempotency_in_progress", Status: 409, Meaning: "A request with this Idempotency-Key is still running. Retry shortly."},
	{Code: "rate_limited", Status: 429, Meaning: "The account is over its hourly request limit; wait for Retry-After seconds."},
	// Webhooks.
	{Code: "invalid_url", Status: 422, Meaning: "A webhook url must be an absolute https URL without credentials, and not a private, loopback or reserved address."},
	{Code: "no_event_types", Status: 422, Meaning: "A webhook must ask for at least one event type or wildcard."},
	{Code: "unknown_event_type", Status: 422, Meaning: "The event type is not one of the API (user.created ... notification.delivered) or a wildcard (user.*, match.*, event.*, message.*, notification.*, *)."},
	{Code: "event_type_not_readable", Status: 422, Meaning: "The credential cannot read these events through the API: user.* needs read or profile, match.* matching or read, event.* events or read, message.* and notification.* read."},
	{Code: "invalid_transport", Status: 422, Meaning: "transport is https or stream."},
	{Code: "webhook_limit_reached", Status: 409, Meaning: "The account has the most webhook subscriptions it may have (50); delete one first."},
	{Code: "credential_revoked", Status: 409, Meaning: "The API key or authorization that made this webhook was revoked, so it delivers nothing; create a new webhook."},
	{Code: "webhook_not_verified", Status: 409, Meaning: "The endpoint has not answered the verification challenge; POST .../verify once it does."},
	{Code: "webhook_paused", Status: 409, Meaning: "The webhook is paused; resume it first."},
	{Code: "delivery_in_progress", Status: 409, Meaning: "The delivery is being attempted right now; look again in a few seconds."},
	{Code: "not_applicable", Status: 409, Meaning: "The operation does not apply to this kind of webhook (stream deliveries are not retried)."},
	{Code: "not_a_stream", Status: 409, Meaning: "Only stream subscriptions (transport: stream) are read as a stream and acknowledged."},
	{Code: "internal_error", Status: 500, Meaning: "Something failed on our side. Retry, and quote the request_id if it persists."},
}

func (s *server) errorCodes() web.ErrorReferenceData {
	var oauthCodes []web.ErrorCode
	for _, c := range oauth.ErrorCodes {
		oauthCodes = append(oauthCodes, web.ErrorCode{Code: c.Code, Status: oauth.Status(c.Code), Meaning: c.Meaning})
	}
	return web.ErrorReferenceData{OAuth: oauthCodes, API: problemCodes}
}
