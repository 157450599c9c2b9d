package registry

import (
	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/webshop"
)

func init() { add("webshop", func() envs.Env { return webshop.New() }) }
