package classify

// ClassScore is precision, recall and F1 of one class.
type ClassScore struct {
	Name      string  `json:"name"`
	Support   int     `json:"support"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// DavidsonReport scores the toxicity head on Davidson et al. rows, with
// the averages weighted by support as the paper reports them.
type DavidsonReport struct {
	Rows     int          `json:"rows"`
	Classes  []ClassScore `json:"classes"`
	Weighted ClassScore   `json:"weighted"`
	Accuracy float64      `json:"accuracy"`
}

// SMSReport scores the spam head on SMS Spam Collection rows, with the
// measures of Almeida et al.: spam caught (recall), blocked ham (false
// positive rate), accuracy.
type SMSReport struct {
	Rows       int     `json:"rows"`
	Accuracy   float64 `json:"accuracy"`
	SpamCaught float64 `json:"spam_caught"`
	BlockedHam float64 `json:"blocked_ham"`
	Precision  float64 `json:"precision"`
	F1         float64 `json:"f1"`
}

// EvaluateDavidson compares predicted classes (argmax) with labels.
func EvaluateDavidson(pred, gold []int) DavidsonReport {
	names := []string{"hate", "offensive", "neither"}
	var tp, fp, fn, sup [3]int
	correct := 0
	for i := range gold {
		sup[gold[i]]++
		if pred[i] == gold[i] {
			tp[gold[i]]++
			correct++
		} else {
			fp[pred[i]]++
			fn[gold[i]]++
		}
	}
	r := DavidsonReport{Rows: len(gold), Accuracy: div(correct, len(gold)), Weighted: ClassScore{Name: "weighted", Support: len(gold)}}
	for k := range names {
		c := ClassScore{Name: names[k], Support: sup[k], Precision: div(tp[k], tp[k]+fp[k]), Recall: div(tp[k], tp[k]+fn[k])}
		c.F1 = f1(c.Precision, c.Recall)
		r.Classes = append(r.Classes, c)
		wgt := float64(sup[k]) / float64(max(1, len(gold)))
		r.Weighted.Precision += wgt * c.Precision
		r.Weighted.Recall += wgt * c.Recall
		r.Weighted.F1 += wgt * c.F1
	}
	return r
}

// EvaluateSMS compares spam predictions with labels.
func EvaluateSMS(pred, gold []bool) SMSReport {
	var tp, fp, fn, tn int
	for i := range gold {
		switch {
		case pred[i] && gold[i]:
			tp++
		case pred[i]:
			fp++
		case gold[i]:
			fn++
		default:
			tn++
		}
	}
	r := SMSReport{Rows: len(gold), Accuracy: div(tp+tn, len(gold)), SpamCaught: div(tp, tp+fn), BlockedHam: div(fp, fp+tn), Precision: div(tp, tp+fp)}
	r.F1 = f1(r.Precision, r.SpamCaught)
	return r
}

func div(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func f1(p, r float64) float64 {
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}
