package classify

import (
	"math"
	"math/rand/v2"
)

// Example is one training text, as features, with its label: a Davidson
// class (0..2) for the toxicity head, 0/1 for the spam head.
type Example struct {
	Feats []uint32
	Label int
}

// TrainOptions tune training.
type TrainOptions struct {
	Bits         int
	Epochs       int
	LearningRate float64 // AdaGrad
	L2           float64
	ClassWeight  [3]float64 // toxicity head
	SpamWeight   float64    // weight of a spam example
	Seed         uint64
}

// Train fits both heads and quantises the weights.
func Train(tox, spam []Example, o TrainOptions) *Model {
	d := 1 << o.Bits
	w := make([]float32, d*Outputs)
	g := make([]float32, d*Outputs) // AdaGrad accumulators
	var bias [Outputs]float64
	var gb [Outputs]float64
	rng := rand.New(rand.NewPCG(o.Seed, 1))
	step := func(f []uint32, k int, grad float64, x float64) {
		for _, fi := range f {
			i := int(fi)*Outputs + k
			gr := grad*x + o.L2*float64(w[i])
			g[i] += float32(gr * gr)
			w[i] -= float32(o.LearningRate * gr / (math.Sqrt(float64(g[i])) + 1e-8))
		}
		gb[k] += grad * grad
		bias[k] -= o.LearningRate * grad / (math.Sqrt(gb[k]) + 1e-8)
	}
	order := func(n int) []int {
		p := rng.Perm(n)
		return p
	}
	for epoch := 0; epoch < o.Epochs; epoch++ {
		for _, i := range order(len(tox)) {
			ex := tox[i]
			if len(ex.Feats) == 0 {
				continue
			}
			x := 1 / math.Sqrt(float64(len(ex.Feats)))
			var z [3]float64
			for k := 0; k < 3; k++ {
				z[k] = bias[k]
				for _, f := range ex.Feats {
					z[k] += float64(w[int(f)*Outputs+k]) * x
				}
			}
			p := Softmax3(z[0], z[1], z[2])
			cw := o.ClassWeight[ex.Label]
			for k := 0; k < 3; k++ {
				y := 0.0
				if k == ex.Label {
					y = 1
				}
				step(ex.Feats, k, (p[k]-y)*cw, x)
			}
		}
		for _, i := range order(len(spam)) {
			ex := spam[i]
			if len(ex.Feats) == 0 {
				continue
			}
			x := 1 / math.Sqrt(float64(len(ex.Feats)))
			z := bias[OutSpam]
			for _, f := range ex.Feats {
				z += float64(w[int(f)*Outputs+OutSpam]) * x
			}
			cw := 1.0
			if ex.Label == 1 {
				cw = o.SpamWeight
			}
			step(ex.Feats, OutSpam, (Sigmoid(z)-float64(ex.Label))*cw, x)
		}
	}
	m := &Model{Bits: o.Bits, W: make([]int8, d*Outputs)}
	for k := 0; k < Outputs; k++ {
		mx := 0.0
		for i := k; i < len(w); i += Outputs {
			mx = math.Max(mx, math.Abs(float64(w[i])))
		}
		scale := mx / 127
		if scale == 0 {
			scale = 1
		}
		m.Scale[k] = float32(scale)
		m.Bias[k] = float32(bias[k])
		for i := k; i < len(w); i += Outputs {
			m.W[i] = int8(math.Round(float64(w[i]) / scale))
		}
	}
	return m
}
