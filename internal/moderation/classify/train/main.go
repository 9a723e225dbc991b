// Command train fits the moderation classifier on the training rows of the
// public data sets (../../publicdata), prints its scores on their held-out
// rows, and writes ../model.bin.gz and ../MODEL.md. Run by `go generate` in
// the classify package; deterministic for a given repository.
package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/moderation/classify"
	"github.com/matchpoint-api/matchpoint/internal/moderation/lexicon"
	"github.com/matchpoint-api/matchpoint/internal/moderation/publicdata"
)

func main() {
	t0 := time.Now()
	lex, err := lexicon.Load()
	if err != nil {
		log.Fatal(err)
	}
	dav, err := publicdata.Davidson()
	if err != nil {
		log.Fatal(err)
	}
	sms, err := publicdata.SMS()
	if err != nil {
		log.Fatal(err)
	}
	o := classify.TrainOptions{Bits: 18, Epochs: 8, LearningRate: 0.3, L2: 1e-6,
		Seed: 2017}
	fmt.Fprintf(os.Stderr, "train: reading %d tweets and %d SMS\n", len(dav), len(sms))
	dTrain, dHeld := classify.Split(dav, lex, o.Bits)
	sTrain, sHeld := classify.Split(sms, lex, o.Bits)
	fmt.Fprintf(os.Stderr, "train: %d+%d training rows, %d+%d held out; %d epochs\n", len(dTrain), len(sTrain), len(dHeld), len(sHeld), o.Epochs)
	// Balanced class weights (n / (classes * n_class)), as scikit-learn's
	// class_weight="balanced": hate speech is 6 % of the tweets.
	var n [3]int
	for _, ex := range dTrain {
		n[ex.Label]++
	}
	for k := range n {
		o.ClassWeight[k] = float64(len(dTrain)) / (3 * float64(n[k]))
	}
	spam := 0
	for _, ex := range sTrain {
		spam += ex.Label
	}
	o.SpamWeight = float64(len(sTrain)-spam) / float64(spam) / 2
	m := classify.Train(dTrain, sTrain, o)
	var buf bytes.Buffer
	if err := m.Encode(&buf); err != nil {
		log.Fatal(err)
	}
	m2, err := classify.Decode(buf.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	r := m2.EvaluatePublic(dHeld, sHeld)
	if err := os.WriteFile("model.bin.gz", buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	doc := fmt.Sprintf(`# The moderation classifier's weights

model.bin.gz: logistic regression, 2^%d hashed buckets of word unigrams and
bigrams and character 3-5-grams, int8 weights with one scale per head, %d bytes
compressed, digest %s. Written by `+"`go generate ./internal/moderation/classify`"+`
(train/main.go) from the training rows of the two data sets in
../publicdata, which are Davidson et al. 2017 (MIT) and the SMS Spam
Collection of Almeida et al. 2011 (CC BY 4.0): see ../publicdata/SOURCES.md
for the full attribution, which applies to these weights too.

The normaliser read the texts with the word lists of digest %s: change
the lists and run go generate again (a test checks it).

Held-out rows (a fifth of each set, by a hash of the text; never trained on):

| data set | rows | figures |
|---|---|---|
| Davidson et al. | %d | weighted precision %.2f, recall %.2f, F1 %.2f; hate class precision %.2f, recall %.2f |
| SMS Spam Collection | %d | accuracy %.3f, spam caught %.3f, blocked ham %.3f |
`, o.Bits, buf.Len(), m2.Digest, lex.Digest, r.Davidson.Rows, r.Davidson.Weighted.Precision, r.Davidson.Weighted.Recall, r.Davidson.Weighted.F1,
		r.Davidson.Classes[0].Precision, r.Davidson.Classes[0].Recall, r.SMS.Rows, r.SMS.Accuracy, r.SMS.SpamCaught, r.SMS.BlockedHam)
	if err := os.WriteFile("MODEL.md", []byte(doc), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Fprint(os.Stderr, doc)
	fmt.Fprintf(os.Stderr, "train: done in %s\n", time.Since(t0).Round(time.Millisecond))
}
