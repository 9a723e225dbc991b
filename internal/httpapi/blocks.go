package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/matching"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// Block is someone you block.
type Block struct {
	Object    string `json:"object" enum:"block"`
	UserID    string `json:"user_id" doc:"The person you block"`
	CreatedAt string `json:"created_at" format:"date-time"`
}

func blockOf(b *matching.Block) Block {
	return Block{Object: "block", UserID: b.BlockedID, CreatedAt: wire.Time(b.CreatedAt)}
}

type blockIn struct {
	UserID string `path:"user_id" maxLength:"64" doc:"usr_..."`
}

func (s *server) registerBlocks() {
	tags := []string{"Users and profiles"}
	huma.Register(s.api, huma.Operation{
		OperationID: "block-user", Method: http.MethodPut, Path: "/v1/users/me/blocks/{user_id}", Tags: tags,
		Summary: "Block someone",
		Description: "Hides you and them from each other everywhere, whoever blocked: profiles (404), match results, match history, messaging and " +
			"event attendee lists. Pending match requests between you are cancelled. Blocking again changes nothing and answers the same block. " +
			"They are not told. Scope: write.",
		Security: requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *blockIn) (*struct{ Body Block }, error) {
		b, err := s.matching.Block(ctx, principalOf(ctx).UserID, in.UserID)
		if err != nil {
			return nil, err
		}
		return &struct{ Body Block }{Body: blockOf(b)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "unblock-user", Method: http.MethodDelete, Path: "/v1/users/me/blocks/{user_id}", Tags: tags,
		Summary:       "Unblock someone",
		Description:   "Lifts your block (a block they made stays). Cancelled requests stay cancelled. 404 if you do not block them. Scope: write.",
		Security:      requires(auth.ScopeWrite),
		DefaultStatus: http.StatusNoContent,
	}, func(ctx context.Context, in *blockIn) (*struct{}, error) {
		return nil, s.matching.Unblock(ctx, principalOf(ctx).UserID, in.UserID)
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "list-blocks", Method: http.MethodGet, Path: "/v1/users/me/blocks", Tags: tags,
		Summary:     "People you block",
		Description: "Ordered by user id. Scope: read.",
		Security:    requires(auth.ScopeRead),
	}, func(ctx context.Context, in *struct{ ListParams }) (*struct{ Body List[Block] }, error) {
		if !validCursor("usr_", in.Cursor) {
			return nil, apperr.InvalidParam("cursor", "invalid_cursor", "cursor is not one this list returned")
		}
		bs, err := s.matching.Blocks(ctx, principalOf(ctx).UserID, in.Cursor, in.Limit+1)
		if err != nil {
			return nil, err
		}
		return &struct{ Body List[Block] }{Body: listOf(bs, in.Limit, func(b *matching.Block) string { return b.BlockedID }, blockOf)}, nil
	})
}
