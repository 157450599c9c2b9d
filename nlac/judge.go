package nlac

import (
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
var judgementPattern = regexp.MustCompile(`(?i)(?:judge?ment|verdict|outcome)\W{0,4}(sub-?optimal|not optimal|optimal)\b`)

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
