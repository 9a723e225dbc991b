// Package classify is the moderation engine's trained signal: logistic
// regression over hashed word unigrams and bigrams and character 3- to
// 5-grams of the normalised tokens. One softmax head reads the three
// classes of the Davidson et al. (2017) tweets (hate, offensive, neither);
// one sigmoid head reads spam as in the SMS Spam Collection (Almeida et al.
// 2011). The weights (model.bin.gz, int8 with a scale per head) are
// produced by `go generate` (train/) from ../publicdata alone.
package classify

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/matchpoint-api/matchpoint/internal/moderation/normalize"
)

//go:generate go run ./train

//go:embed model.bin.gz
var modelGz []byte

// Outputs of the model.
const (
	OutHate = iota
	OutOffensive
	OutNeither
	OutSpam
	Outputs
)

const magic = "MPLR1"

// Model is a trained classifier. Its methods are safe for concurrent use.
type Model struct {
	Bits   int
	W      []int8 // bucket*Outputs + output
	Scale  [Outputs]float32
	Bias   [Outputs]float32
	Digest string
}

// Scores are the model's probabilities.
type Scores struct {
	Hate, Offensive, Neither float64 // sum to 1
	Spam                     float64
}

// Default decodes the embedded model.
func Default() (*Model, error) {
	return Decode(modelGz)
}

// Decode reads a model written by Encode.
func Decode(gz []byte) (*Model, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("classify: %w", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("classify: %w", err)
	}
	if len(b) < len(magic)+1 || string(b[:len(magic)]) != magic {
		return nil, errors.New("classify: not a model file")
	}
	m := &Model{Bits: int(b[len(magic)])}
	r := bytes.NewReader(b[len(magic)+1:])
	if m.Bits < 10 || m.Bits > 24 {
		return nil, errors.New("classify: bad model size")
	}
	if err := binary.Read(r, binary.LittleEndian, &m.Scale); err != nil {
		return nil, err
	}
	if err := binary.Read(r, binary.LittleEndian, &m.Bias); err != nil {
		return nil, err
	}
	m.W = make([]int8, (1<<m.Bits)*Outputs)
	if err := binary.Read(r, binary.LittleEndian, m.W); err != nil {
		return nil, fmt.Errorf("classify: weights: %w", err)
	}
	h := sha256.Sum256(gz)
	m.Digest = hex.EncodeToString(h[:4])
	return m, nil
}

// Encode writes the model, gzip-compressed.
func (m *Model) Encode(w io.Writer) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	zw.Write([]byte(magic))
	zw.Write([]byte{byte(m.Bits)})
	binary.Write(zw, binary.LittleEndian, m.Scale)
	binary.Write(zw, binary.LittleEndian, m.Bias)
	if err := binary.Write(zw, binary.LittleEndian, m.W); err != nil {
		return err
	}
	return zw.Close()
}

// Score classifies normalised tokens.
func (m *Model) Score(toks []normalize.Token) Scores {
	var buf [256]uint32
	return m.scoreFeats(Features(toks, m.Bits, buf[:0]))
}

func (m *Model) scoreFeats(feats []uint32) Scores {
	var z [Outputs]float64
	if len(feats) > 0 {
		x := 1 / math.Sqrt(float64(len(feats)))
		var acc [Outputs]int32
		for _, f := range feats {
			w := m.W[int(f)*Outputs : int(f)*Outputs+Outputs : int(f)*Outputs+Outputs]
			acc[0] += int32(w[0])
			acc[1] += int32(w[1])
			acc[2] += int32(w[2])
			acc[3] += int32(w[3])
		}
		for k := range z {
			z[k] = float64(acc[k]) * float64(m.Scale[k]) * x
		}
	}
	for k := range z {
		z[k] += float64(m.Bias[k])
	}
	p := Softmax3(z[0], z[1], z[2])
	return Scores{Hate: p[0], Offensive: p[1], Neither: p[2], Spam: Sigmoid(z[OutSpam])}
}

// Softmax3 is the softmax of three logits.
func Softmax3(a, b, c float64) [3]float64 {
	mx := math.Max(a, math.Max(b, c))
	ea, eb, ec := math.Exp(a-mx), math.Exp(b-mx), math.Exp(c-mx)
	s := ea + eb + ec
	return [3]float64{ea / s, eb / s, ec / s}
}

// Sigmoid is the logistic function.
func Sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }
