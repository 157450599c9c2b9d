package cgo_test

import (
	"testing"

	"github.com/agentrl/agentrl/cgo"
	"github.com/agentrl/agentrl/cgo/internal/fakedevice"
)

// TestDisarmedDeviceMakesBackendsWithoutReset: a device's backends have
// the reset function their init gives them until the device is disarmed,
// and none after, however often it is disarmed.
func TestDisarmedDeviceMakesBackendsWithoutReset(t *testing.T) {
	cgo.Init()
	d := fakedevice.New()
	defer d.Free()
	if !d.NewBackendHasReset() {
		t.Fatal("the fake device's backend should have a reset function before the device is disarmed")
	}
	for range 2 {
		if !d.Disarm() {
			t.Fatal("disarm failed")
		}
		if d.NewBackendHasReset() {
			t.Fatal("a disarmed device's backend has a reset function")
		}
	}
}
