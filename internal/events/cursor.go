package events

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"math"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/ids"
)

// Cursors are opaque to clients and short (lists cap them at 64
// characters): a kind byte naming the list and its order, the sort keys as
// 8 bytes each, and the 16 bytes of the id that breaks ties, in base64url.

// Cursor kinds.
const (
	kindStart     = 's'
	kindDistance  = 'd'
	kindRelevance = 'q'
	kindUpcoming  = 'u'
	kindPast      = 'p'
	kindAttendee  = 'a'
	kindRecommend = 'r'
)

func sortKind(sort string) byte {
	switch sort {
	case SortDistance:
		return kindDistance
	case SortRelevance:
		return kindRelevance
	}
	return kindStart
}

// idCoding is the alphabet of internal/ids: an id is its prefix and 16
// bytes in this base32.
var idCoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

func packCursor(kind byte, keys []uint64, id string) string {
	b := make([]byte, 0, 1+8*len(keys)+16)
	b = append(b, kind)
	for _, k := range keys {
		b = binary.BigEndian.AppendUint64(b, k)
	}
	if i := strings.IndexByte(id, '_'); i >= 0 {
		raw, _ := idCoding.DecodeString(id[i+1:])
		b = append(b, raw...)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func unpackCursor(s string, kind byte, n int, prefix string) ([]uint64, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 1+8*n+16 || b[0] != kind {
		return nil, "", badCursor()
	}
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = binary.BigEndian.Uint64(b[1+8*i:])
	}
	id := prefix + idCoding.EncodeToString(b[1+8*n:])
	if !ids.Valid(prefix, id) {
		return nil, "", badCursor()
	}
	return keys, id, nil
}

func badCursor() error {
	return apperr.InvalidParam("cursor", "invalid_cursor", "cursor is not one this list returned with these parameters")
}

func encodeCursor(kind byte, c Cursor) string {
	return packCursor(kind, []uint64{math.Float64bits(c.Key)}, c.ID)
}

func decodeCursor(kind byte, s string) (*Cursor, error) {
	keys, id, err := unpackCursor(s, kind, 1, ids.SportsEvent)
	if err != nil {
		return nil, err
	}
	k := math.Float64frombits(keys[0])
	if math.IsNaN(k) || math.IsInf(k, 0) {
		return nil, badCursor()
	}
	return &Cursor{Key: k, ID: id}, nil
}

// EncodeAttendeeCursor is the next cursor after a.
func EncodeAttendeeCursor(a *Attendee) string {
	return packCursor(kindAttendee, []uint64{uint64(StatusRank(a.Status)), uint64(a.Position)}, a.ID)
}

func decodeAttendeeCursor(s string) (*AttendeeCursor, error) {
	keys, id, err := unpackCursor(s, kindAttendee, 2, ids.RSVP)
	if err != nil || keys[0] > 3 || keys[1] > MaxCapacity*10 {
		return nil, badCursor()
	}
	return &AttendeeCursor{Rank: int(keys[0]), Position: int(keys[1]), ID: id}, nil
}

type recCursor struct {
	Score float64
	Start int64 // microseconds
	ID    string
}

func encodeRecCursor(f Found) string {
	return packCursor(kindRecommend, []uint64{math.Float64bits(f.Score), uint64(f.Event.Start.UnixMicro())}, f.Event.ID)
}

func decodeRecCursor(s string) (*recCursor, error) {
	keys, id, err := unpackCursor(s, kindRecommend, 2, ids.SportsEvent)
	if err != nil {
		return nil, err
	}
	sc := math.Float64frombits(keys[0])
	if math.IsNaN(sc) {
		return nil, badCursor()
	}
	return &recCursor{Score: sc, Start: int64(keys[1]), ID: id}, nil
}
