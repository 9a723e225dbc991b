package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

const verificationColumns = `id, user_id, status, document_type, note, COALESCE(reviewer_id, ''), review_note, created_at, reviewed_at`

func scanVerification(row scanner) (*users.Verification, error) {
	var v users.Verification
	var created int64
	var reviewed sql.NullInt64
	if err := row.Scan(&v.ID, &v.UserID, &v.Status, &v.DocumentType, &v.Note, &v.ReviewerID, &v.ReviewNote, &created, &reviewed); err != nil {
		return nil, err
	}
	v.CreatedAt, v.ReviewedAt = fromMicros(created), fromNullMicros(reviewed)
	return &v, nil
}

// CreateVerification files a request; a second pending one is a conflict.
func (s *Users) CreateVerification(ctx context.Context, v *users.Verification) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO verification_requests (id, user_id, status, document_type, note, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, v.ID, v.UserID, v.Status, v.DocumentType, v.Note, micros(v.CreatedAt))
	if _, dup := uniqueViolation(err); dup {
		return apperr.Conflictf("verification_pending", "", "a verification request is already pending")
	}
	if err != nil {
		return fmt.Errorf("store: create verification: %w", err)
	}
	return nil
}

// VerificationByID returns one request.
func (s *Users) VerificationByID(ctx context.Context, id string) (*users.Verification, error) {
	v, err := scanVerification(s.db.QueryRowContext(ctx, `SELECT `+verificationColumns+` FROM verification_requests WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.NotFoundf("no verification request %q", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get verification: %w", err)
	}
	return v, nil
}

// LatestVerification returns the user's newest request.
func (s *Users) LatestVerification(ctx context.Context, userID string) (*users.Verification, error) {
	v, err := scanVerification(s.db.QueryRowContext(ctx,
		`SELECT `+verificationColumns+` FROM verification_requests WHERE user_id = $1 ORDER BY id DESC LIMIT 1`, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.NotFoundf("no verification request")
	}
	if err != nil {
		return nil, fmt.Errorf("store: get verification: %w", err)
	}
	return v, nil
}

// ListVerifications pages by id.
func (s *Users) ListVerifications(ctx context.Context, status, after string, limit int) ([]*users.Verification, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+verificationColumns+` FROM verification_requests
		WHERE ($1 = '' OR status = $1) AND id > $2 ORDER BY id LIMIT $3`, status, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list verifications: %w", err)
	}
	defer rows.Close()
	var out []*users.Verification
	for rows.Next() {
		v, err := scanVerification(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list verifications: %w", err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// ReviewVerification records a decision on a still-pending request.
func (s *Users) ReviewVerification(ctx context.Context, v *users.Verification, ev *outbox.Event) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE verification_requests SET status = $2, reviewer_id = $3, review_note = $4, reviewed_at = $5
			WHERE id = $1 AND status = 'pending'`, v.ID, v.Status, v.ReviewerID, v.ReviewNote, nullMicros(v.ReviewedAt))
		if err != nil {
			return fmt.Errorf("store: review verification: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return apperr.Conflictf("already_reviewed", "", "the request was already reviewed")
		}
		if v.Status == users.VerificationApproved {
			res, err := tx.ExecContext(ctx, `UPDATE users SET verified = $2, updated_at = $3 WHERE id = $1 AND deleted_at IS NULL`,
				v.UserID, true, nullMicros(v.ReviewedAt))
			if err != nil {
				return fmt.Errorf("store: mark verified: %w", err)
			}
			if n, _ := res.RowsAffected(); n > 0 {
				noteCredentials(tx)
			}
		}
		if err := addNotification(ctx, tx, verificationNotification(v)); err != nil {
			return err
		}
		return appendEvent(ctx, tx, ev)
	})
}
