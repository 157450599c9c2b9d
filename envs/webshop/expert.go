package webshop

import "errors"

// ExpertAction returns the action of a shopper who knows the goal: search
// with a query built from it, open the first listed product that earns the
// full reward (paging if needed), select the goal's options and buy. From
// any page it steers back to that path, so it also acts well after other
// policies' actions.
func (e *Env) ExpertAction() (string, error) {
	if !e.started {
		return "", errors.New("webshop expert: Reset was not called")
	}
	if e.done {
		return "", errors.New("webshop expert: the episode is over")
	}
	switch e.page {
	case pageSearch:
		return "search[" + e.goal.query + "]", nil
	case pageResults:
		return e.expertOnResults(), nil
	case pageItem:
		return e.expertOnItem(), nil
	}
	return "click[" + labelPrev + "]", nil
}

func (e *Env) expertOnResults() string {
	for rank, doc := range e.results {
		p := &e.cat.products[doc]
		if !e.cat.satisfies(p, &e.goal, e.planScratch(len(p.options))) {
			continue
		}
		switch page := rank / resultsPerPage; {
		case page == e.resultPage:
			return "click[" + p.asin + "]"
		case page > e.resultPage:
			return "click[" + labelNext + "]"
		default:
			return "click[" + labelPrev + "]"
		}
	}
	return "click[" + labelBackToSearch + "]"
}

func (e *Env) expertOnItem() string {
	p := &e.cat.products[e.item]
	plan := e.planScratch(len(p.options))
	if !e.cat.satisfies(p, &e.goal, plan) {
		return "click[" + labelPrev + "]"
	}
	for gi, vi := range plan {
		if vi >= 0 && e.chosen[gi] != vi {
			return "click[" + p.options[gi].values[vi] + "]"
		}
	}
	return "click[" + labelBuyNow + "]"
}
