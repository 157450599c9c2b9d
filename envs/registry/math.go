package registry

import (
	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/math"
)

func init() {
	add("math", func() envs.Env { return math.New() })
	add("math-calc", func() envs.Env { return math.NewCalc() })
}
