package registry

import (
	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/alfworld"
)

func init() { add("alfworld", func() envs.Env { return alfworld.New() }) }
