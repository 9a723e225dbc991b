package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/web"
)

// Problem is the error body of the /v1 API: RFC 9457 problem details plus
// code, param and request_id (DECISIONS.md, Errors of the /v1 API).
type Problem struct {
	Type      string         `json:"type" doc:"Address of this error's entry in the error reference"`
	Title     string         `json:"title" doc:"Short summary of the status"`
	Status    int            `json:"status" doc:"HTTP status code"`
	Detail    string         `json:"detail,omitempty" doc:"What went wrong, for a human"`
	Code      string         `json:"code" doc:"Machine-readable error code, listed in the error reference"`
	Param     string         `json:"param,omitempty" doc:"The offending field, when there is one"`
	RequestID string         `json:"request_id,omitempty" doc:"The Request-Id of the request, for support"`
	Errors    []ProblemField `json:"errors,omitempty" doc:"Every invalid field, when validation found several"`
	Flagged   []string       `json:"flagged,omitempty" doc:"content_blocked: the moderation categories that refused the text"`
	// SuspendedUntil is absent for a suspension without an end.
	SuspendedUntil string `json:"suspended_until,omitempty" format:"date-time" doc:"account_suspended: when the suspension ends; absent when it lasts until lifted"`
}

// ProblemField is one validation failure.
type ProblemField struct {
	Param   string `json:"param"`
	Message string `json:"message"`
}

func (p *Problem) Error() string  { return p.Code + ": " + p.Detail }
func (p *Problem) GetStatus() int { return p.Status }

// ContentType makes Huma send problems as application/problem+json.
func (p *Problem) ContentType(string) string { return "application/problem+json" }

// problems builds problem bodies with the service's error reference address.
type problems struct {
	docsURL string // error reference page, e.g. http://localhost:8080/docs/errors
}

func (pb *problems) new(ctx context.Context, status int, code, param, detail string) *Problem {
	return &Problem{
		Type: web.ErrorLink(pb.docsURL, code), Title: http.StatusText(status), Status: status,
		Detail: detail, Code: code, Param: param, RequestID: RequestID(ctx),
	}
}

// fromError turns any error into a problem. Domain errors keep their code,
// message and param; anything else is logged and becomes a bare 500.
func (pb *problems) fromError(ctx context.Context, err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	if e, ok := apperr.As(err); ok && e.Kind != apperr.Internal {
		p := pb.new(ctx, e.Kind.HTTPStatus(), e.Code, e.Param, e.Message)
		p.Flagged, p.SuspendedUntil = e.Flagged, e.SuspendedUntil
		return p
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		// The client went away; nobody will read this, but don't call it a bug.
		// A cancellation while the request's own context is live came from
		// inside the service and is logged as the bug it is.
		return pb.new(ctx, 499, "request_cancelled", "", "The request was cancelled.")
	}
	Logger(ctx).ErrorContext(ctx, "internal error", slog.String("error", err.Error()))
	return pb.new(ctx, http.StatusInternalServerError, "internal_error", "", "Something went wrong on our side. Retry later, and quote the request_id if it persists.")
}

// write sends a problem response.
func (pb *problems) write(w http.ResponseWriter, r *http.Request, p *Problem) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

func (pb *problems) writeErr(w http.ResponseWriter, r *http.Request, err error) {
	pb.write(w, r, pb.fromError(r.Context(), err))
}

// fromHuma adapts Huma's own errors (validation, bad JSON, media type, body
// size) and errors returned by handlers into problems.
func (pb *problems) fromHuma(hctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
	ctx := context.Background()
	if hctx != nil {
		ctx = hctx.Context()
	}
	var fields []ProblemField
	for _, e := range errs {
		if e == nil {
			continue
		}
		var d huma.ErrorDetailer
		if errors.As(e, &d) {
			det := d.ErrorDetail()
			fields = append(fields, ProblemField{Param: requiredParam(paramOf(det.Location), det.Message), Message: cleanDecodeError(det.Message)})
			continue
		}
		// A handler's own error: the domain decides the status.
		return pb.fromError(ctx, e)
	}
	code := "invalid_request"
	switch status {
	case http.StatusUnprocessableEntity:
		code = "validation_failed"
		if len(fields) > 0 && fields[0].Message == "unexpected property" {
			code = "unknown_field"
		}
	case http.StatusBadRequest:
		code = "invalid_json"
		if len(fields) > 0 && fields[0].Param != "" {
			code = "invalid_request"
		}
	case http.StatusUnsupportedMediaType:
		code, msg = "unsupported_media_type", "Content-Type must be application/json"
		fields = nil
	case http.StatusRequestEntityTooLarge:
		return pb.fromError(ctx, errBodyTooLarge)
	case http.StatusInternalServerError:
		return pb.fromError(ctx, errors.New(msg))
	}
	p := pb.new(ctx, status, code, "", cleanDecodeError(msg))
	if len(fields) > 0 {
		p.Param = fields[0].Param
		parts := make([]string, 0, len(fields))
		for _, f := range fields {
			if f.Param != "" {
				parts = append(parts, f.Param+": "+f.Message)
			} else {
				parts = append(parts, f.Message)
			}
		}
		p.Detail = strings.Join(parts, "; ")
		if len(fields) > 1 {
			p.Errors = fields
		}
	}
	return p
}

// cleanDecodeError keeps Go's type names out of what a client reads: the JSON
// decoder says "cannot unmarshal number 1e400 into Go value of type float64".
func cleanDecodeError(msg string) string {
	if i := strings.Index(msg, " into Go "); i >= 0 {
		what := strings.TrimPrefix(msg[:i], "json: cannot unmarshal ")
		return "The body could not be read: " + what + " does not fit the field (numbers must be finite 64-bit values)."
	}
	return msg
}

// paramOf turns Huma's "body.skill_levels.tennis" or "query.limit" into the
// field name a client sent.
func paramOf(loc string) string {
	for _, prefix := range []string{"body.", "query.", "path.", "header."} {
		if s, ok := strings.CutPrefix(loc, prefix); ok {
			return s
		}
	}
	if loc == "body" {
		return ""
	}
	return loc
}

// requiredParam names a missing required field: Huma reports it at the
// object that lacks it ("body"), with the field's name in the message.
func requiredParam(param, msg string) string {
	var name string
	if _, err := fmt.Sscanf(msg, "expected required property %s to be present", &name); err != nil || name == "" {
		return param
	}
	if param == "" {
		return name
	}
	return param + "." + name
}
