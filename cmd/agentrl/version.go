package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/cgo"
)

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version, the llama.cpp build and the compute backends found",
		Action: func(c *cli.Context) error {
			fmt.Printf("agentrl %s\n", version)
			fmt.Printf("system info: %s\n", cgo.SystemInfo())
			return nil
		},
	}
}
