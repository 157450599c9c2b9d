package tauretail

import (
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
)

func TestOpeningWithholdsDetails(t *testing.T) {
	openings := map[string]bool{}
	for seed := int64(0); seed < 200; seed++ {
		e := New().(*Env)
		first, _ := e.Reset(envs.Train, seed)
		openings[first] = true
		u := e.task.user
		for _, secret := range []string{u.Email, u.ID, u.Address.Zip, "#W"} {
			if strings.Contains(first, secret) {
				t.Errorf("seed %d: opening %q gives away %q", seed, first, secret)
			}
		}
		if !strings.HasPrefix(first, "User: ") {
			t.Errorf("opening %q lacks the User: prefix", first)
		}
	}
	if len(openings) < 30 {
		t.Errorf("only %d distinct openings in 200 episodes", len(openings))
	}
}

func TestUserRevealsOnlyWhatIsAsked(t *testing.T) {
	e, _ := findEpisode(t, envs.Train, func(tk *task) bool {
		return tk.knowsEmail && len(tk.goals) == 1 && tk.goals[0].kind == goalCancel && tk.goals[0].knowsOrderID
	})
	g := e.task.goals[0]
	res := step(t, e, respondAction("Sure. What is your email?"))
	if !strings.Contains(res.Observation, e.task.user.Email) || strings.Contains(res.Observation, g.orderID) {
		t.Errorf("asked for the email: %q", res.Observation)
	}
	res = step(t, e, respondAction("Which order would you like to cancel? Please give me the order id."))
	if !strings.Contains(res.Observation, g.orderID) || strings.Contains(res.Observation, g.reasonPhrase) {
		t.Errorf("asked for the order id: %q", res.Observation)
	}
	res = step(t, e, respondAction("And why do you want to cancel it?"))
	if !strings.Contains(res.Observation, g.reasonPhrase) {
		t.Errorf("asked for the reason: %q", res.Observation)
	}
}

func TestUserForgetsEmail(t *testing.T) {
	e, _ := findEpisode(t, envs.Train, func(tk *task) bool { return !tk.knowsEmail })
	u := e.task.user
	res := step(t, e, respondAction("Could you give me your email?"))
	for _, want := range []string{u.FirstName + " " + u.LastName, u.Address.Zip} {
		if !strings.Contains(res.Observation, want) {
			t.Errorf("reply %q lacks %q", res.Observation, want)
		}
	}
	if strings.Contains(res.Observation, u.Email) {
		t.Errorf("user who forgot the email gave it: %q", res.Observation)
	}
}

func TestUserListsOtherItemsOnlyWhenAsked(t *testing.T) {
	e, _ := findEpisode(t, envs.Train, onlyGoal(goalModifyItems, func(g *goal) bool { return len(g.changes) == 2 }))
	g := e.task.goals[0]
	first, second := g.changes[0].old.Options.Describe(), g.changes[1].old.Options.Describe()
	res := step(t, e, respondAction("Which item would you like to change?"))
	if !strings.Contains(res.Observation, first) || strings.Contains(res.Observation, second) {
		t.Errorf("asked for the item: %q", res.Observation)
	}
	res = step(t, e, respondAction("Is there any other item you want to change?"))
	if !strings.Contains(res.Observation, second) {
		t.Errorf("asked for other items: %q", res.Observation)
	}
	res = step(t, e, respondAction("Any other items?"))
	if !strings.Contains(res.Observation, "everything") && !strings.Contains(res.Observation, "all the items") &&
		!strings.Contains(res.Observation, "nothing else") {
		t.Errorf("asked again for other items: %q", res.Observation)
	}
}

func TestUserConfirmsOnlyAnExactSummary(t *testing.T) {
	e, _ := findEpisode(t, envs.Train, onlyGoal(goalCancel, nil))
	g := e.task.goals[0]
	other := reasonMistake
	if g.reason == reasonMistake {
		other = reasonNoLongerNeeded
	}
	res := step(t, e, respondAction("Shall I cancel order "+g.orderID+` with the reason "`+other+`"? (yes/no)`))
	if !strings.HasPrefix(res.Observation, "User: No") || g.confirmed {
		t.Errorf("wrong reason: %q", res.Observation)
	}
	res = step(t, e, respondAction("Could you confirm your email address?"))
	if strings.HasPrefix(res.Observation, "User: No") {
		t.Errorf("a question about the email was taken for a summary: %q", res.Observation)
	}
	res = step(t, e, respondAction("Shall I cancel order "+g.orderID+` with the reason "`+g.reason+`"? (yes/no)`))
	if !strings.HasPrefix(res.Observation, "User: Yes") || !g.confirmed {
		t.Errorf("right summary: %q", res.Observation)
	}
}

func TestUserGivesUp(t *testing.T) {
	e := newEnv(t, envs.Train, 4)
	var res envs.StepResult
	for i := 0; i < maxStalls; i++ {
		res = step(t, e, respondAction("The weather is nice today."))
	}
	if !res.Done || !strings.Contains(res.Observation, stopToken) || res.Reward != 0 {
		t.Errorf("after %d unclear messages: %+v", maxStalls, res)
	}
}

func TestUserBringsUpTheNextRequest(t *testing.T) {
	e, first := findEpisode(t, envs.Train, func(tk *task) bool { return len(tk.goals) == 2 })
	transcript, res := runExpert(t, e, first)
	if !res.Info.Success {
		t.Fatalf("expert failed:\n%s", transcript)
	}
	for _, tmpl := range requestTemplates[e.task.goals[1].kind] {
		if plain, _, _ := strings.Cut(tmpl, "{"); strings.Contains(first, plain) {
			t.Errorf("the opening %q already brings up the second request", first)
		}
	}
	if strings.Count(transcript, stopToken) != 1 || !strings.HasSuffix(transcript, stopToken) {
		t.Errorf("the user should stop once, at the end:\n%s", transcript)
	}
}
