package nlac

import (
	"math"
	"regexp"
	"strings"
)

// Judgement is the evaluator's verdict on an action, parsed from the last
// line of its critique that states one.
type Judgement int

const (
	Unparsed Judgement = iota
	Optimal
	Suboptimal
)

func (j Judgement) String() string {
	switch j {
	case Optimal:
		return "optimal"
	case Suboptimal:
		return "suboptimal"
	}
	return "unparsed"
}

// judgementPattern finds "Judgement: optimal" and its variants: either
// spelling, any case, Markdown emphasis, "sub-optimal" and "not optimal";
// and the same verdict labelled "Verdict:" or "Outcome:". A small critic
// trained on future descriptions, which end in "Outcome: success", comes
// to label its verdict so in the evaluator's role too (on WebShop, 24 of
// 32 critiques of SmolLM2's second NLAC iteration ended "Outcome:
// optimal" or "Outcome: suboptimal"); a future's outcome is a success or a
// failure, never optimal, so the label is not ambiguous.
//
// Between the label and the verdict any run of up to 12 characters that
// are not letters or digits: "**Judgement:** **optimal**" puts six
// there, "Judgement:\n\n**Optimal**" five.
var judgementPattern = regexp.MustCompile(`(?i)(?:judge?ment|verdict|outcome)[^0-9A-Za-z]{0,12}(sub-?optimal|not optimal|optimal)(?:\b|_)`)

// ParseJudgement reads the judgement a critique ends with: the last
// "Judgement: optimal" or "Judgement: suboptimal" (or variant, see
// judgementPattern) in it. A critique with none is Unparsed; the run
// counts these and treats them as nlac.unparsed_judgement says.
func ParseJudgement(critique string) Judgement {
	all := judgementPattern.FindAllStringSubmatch(critique, -1)
	if len(all) == 0 {
		return Unparsed
	}
	if strings.EqualFold(all[len(all)-1][1], "optimal") {
		return Optimal
	}
	return Suboptimal
}

// verdictCue continues a critique's reasoning where the evaluator states
// its verdict, and verdictWords are the two verdicts it chooses between
// after it: each verdict's probability is scored there.
const verdictCue = "\nJudgement:"

var verdictWords = [2]string{" optimal", " suboptimal"}

// verdictTexts are the critique's reasoning followed by the cue and each
// verdict: the two texts whose probabilities are compared (verdictIndex
// says which is which).
func verdictTexts(critique string) [2]string {
	cue := strings.TrimPrefix(reasoning(critique)+verdictCue, "\n") // no reasoning: the verdict begins the answer
	return [2]string{cue + verdictWords[0], cue + verdictWords[1]}
}

// verdictIndex is the place of verdict j, optimal or suboptimal, in
// verdictWords and verdictTexts.
func verdictIndex(j Judgement) int {
	if j == Optimal {
		return 0
	}
	return 1
}

// unfinishedVerdict is a verdict's label at the end of a critique cut off
// by its token limit, with the start of a verdict after it at most
// ("Judgement:", "Verdict: sub").
var unfinishedVerdict = regexp.MustCompile(`(?i)\b(?:judge?ment|verdict|outcome)\**\s*[:-][\s*]*([a-z-]*)$`)

// reasoning is what a critique says before its verdict: the text before
// the last judgement it states, or before a verdict it was cut off in;
// all of it when it has neither. The verdicts are scored after it.
func reasoning(critique string) string {
	if all := judgementPattern.FindAllStringIndex(critique, -1); len(all) > 0 {
		critique = critique[:all[len(all)-1][0]]
	} else if m := unfinishedVerdict.FindStringSubmatchIndex(critique); m != nil {
		word := strings.ToLower(critique[m[2]:m[3]])
		if strings.HasPrefix("optimal", word) || strings.HasPrefix("suboptimal", word) || strings.HasPrefix("sub-optimal", word) {
			critique = critique[:m[0]]
		}
	}
	// What emphasised the label goes with it ("**Judgement:** optimal").
	return strings.TrimRight(strings.TrimSpace(critique), " \t\n*_#")
}

// firstOfTwo is the probability of the first of two alternatives (the
// verdict "optimal" against "suboptimal", the outcome "success" against
// "failure") from their log-probabilities.
func firstOfTwo(logFirst, logSecond float64) float64 {
	return 1 / (1 + math.Exp(logSecond-logFirst))
}

// areaUnderROC is the probability that a value drawn from with exceeds
// one drawn from without, ties counting half: the area under the ROC
// curve of telling them apart by the value (0.5: not at all). ok is false
// when either is empty.
func areaUnderROC(with, without []float64) (area float64, ok bool) {
	if len(with) == 0 || len(without) == 0 {
		return 0, false
	}
	var wins float64
	for _, a := range with {
		for _, b := range without {
			switch {
			case a > b:
				wins++
			case a == b:
				wins += 0.5
			}
		}
	}
	return wins / float64(len(with)*len(without)), true
}
