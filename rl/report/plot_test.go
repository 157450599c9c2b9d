package report

import (
	"slices"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// TestLossLinesLeaveOutAbsentLosses: the loss figure shows each named
// loss where an iteration logged it and the bare loss only where none is
// named, so that a StepAgent cycle whose policy update was skipped (its
// discriminator trained: optimiser steps, but loss 0 and no "policy")
// and an iteration without steps draw no point at zero.
func TestLossLinesLeaveOutAbsentLosses(t *testing.T) {
	run := Run{Metrics: []Iteration{
		{Iteration: 1, GradSteps: 8, Loss: 0.5, Losses: map[string]float64{"policy": 0.5, "discriminator": 0.6}},
		{Iteration: 2, GradSteps: 12, Losses: map[string]float64{"discriminator": 0.4}}, // the policy paused
		{Iteration: 3, GradSteps: 12},                       // no optimiser step
		{Iteration: 4, GradSteps: 16, Loss: 0.3},            // a record from before named losses
		{Iteration: 5, GradSteps: 20, Loss: 0, Losses: nil}, // a loss of exactly 0 after steps still shows
	}}
	loss, named := lossLines(run)
	want := map[string]plotter.XYs{
		"policy":        {{X: 8, Y: 0.5}},
		"discriminator": {{X: 8, Y: 0.6}, {X: 12, Y: 0.4}},
	}
	for name, xys := range want {
		if !slices.Equal(named[name], xys) {
			t.Errorf("%s: %v, want %v", name, named[name], xys)
		}
	}
	if len(named) != len(want) {
		t.Errorf("named lines %v, want %v", named, want)
	}
	if wantLoss := (plotter.XYs{{X: 16, Y: 0.3}, {X: 20, Y: 0}}); !slices.Equal(loss, wantLoss) {
		t.Errorf("loss %v, want %v", loss, wantLoss)
	}
}
