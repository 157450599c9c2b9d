package rl

import "testing"

// TestLossesText: an iteration's log line names its losses where it
// logged named ones, so that a StepAgent cycle whose policy paused shows
// its discriminator's loss and no policy loss of 0.
func TestLossesText(t *testing.T) {
	for _, c := range []struct {
		m    Metrics
		want string
	}{
		{Metrics{Loss: 0.5}, "loss 0.5000"},
		{Metrics{Loss: 0.25, Losses: map[string]float64{"policy": 0.25, "discriminator": 0.6}}, "losses discriminator 0.6000, policy 0.2500"},
		{Metrics{Losses: map[string]float64{"discriminator": 0.4}}, "losses discriminator 0.4000"},
	} {
		if got := lossesText(c.m); got != c.want {
			t.Errorf("%+v: %q, want %q", c.m, got, c.want)
		}
	}
}
