package registry

import (
	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/tauretail"
)

func init() { add("tauretail", func() envs.Env { return tauretail.New() }) }
