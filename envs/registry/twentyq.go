package registry

import (
	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/twentyq"
)

func init() { add("twentyq", func() envs.Env { return twentyq.New() }) }
