package main

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/cgo"
)

// llamaCppCommit is the upstream llama.cpp commit vendored by the pinned
// github.com/ollama/ollama module (its Makefile.sync FETCH_HEAD).
const llamaCppCommit = "ec98e2002"

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version, the llama.cpp build and the compute devices found",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			loadGPUBackends()
			unused := cgo.UnusedCPUFeatures()
			v := map[string]any{
				"version":             version,
				"llama_cpp_commit":    llamaCppCommit,
				"llama_cpp_module":    moduleVersion("github.com/ollama/ollama"),
				"system_info":         cgo.SystemInfo(),
				"unused_cpu_features": unused,
				"gpu_offload":         cgo.SupportsGPUOffload(),
				"devices":             cgo.Devices(),
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(v)
			}
			fmt.Fprintf(c.App.Writer, "agentrl %s\n", version)
			fmt.Fprintf(c.App.Writer, "llama.cpp %s (github.com/ollama/ollama %s)\n", llamaCppCommit, v["llama_cpp_module"])
			fmt.Fprintf(c.App.Writer, "system info: %s\n", v["system_info"])
			if len(unused) > 0 {
				fmt.Fprintf(c.App.Writer, "unused CPU features: %s (build with make for them)\n", strings.Join(unused, ", "))
			}
			fmt.Fprintf(c.App.Writer, "devices:\n")
			for _, d := range cgo.Devices() {
				fmt.Fprintf(c.App.Writer, "  %-8s %-5s %s (%s backend, %d MiB)\n", d.Name, d.Type, d.Description, d.Backend, d.MemoryTotal>>20)
			}
			return nil
		},
	}
}

func moduleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == path {
				return dep.Version
			}
		}
	}
	return "unknown"
}
