package envs

import "testing"

// closingEnv counts the times it is closed.
type closingEnv struct {
	fakeEnv
	closed *int
}

func (e closingEnv) Close() error { *e.closed++; return nil }

func TestSpecOfClosesWhatItMakes(t *testing.T) {
	made, closed := 0, 0
	spec := SpecOf(func() Env { made++; return closingEnv{closed: &closed} })
	if spec.Name != "fake" {
		t.Errorf("SpecOf = %+v, want the fake environment's spec", spec)
	}
	if made != 1 || closed != 1 {
		t.Errorf("SpecOf made %d environments and closed %d, want 1 and 1", made, closed)
	}
}
