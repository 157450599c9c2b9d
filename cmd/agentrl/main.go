// Command agentrl trains LLM agents with NLAC and StepAgent on llama.cpp.
//
// The command is thin: it parses flags, builds configurations and calls the
// packages that do the work. Errors go to stderr with a non-zero exit.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"
)

// version is set at link time by the Makefile (-X main.version=...).
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := newApp()
	if err := app.RunContext(ctx, os.Args); err != nil {
		fmt.Fprintf(os.Stderr, "agentrl: %v\n", err)
		var exit cli.ExitCoder
		if errors.As(err, &exit) && exit.ExitCode() != 0 {
			os.Exit(exit.ExitCode())
		}
		os.Exit(1)
	}
}

func newApp() *cli.App {
	return &cli.App{
		Name:    "agentrl",
		Usage:   "train LLM agents with NLAC and StepAgent on llama.cpp",
		Version: version,
		// Errors are printed once, by main.
		ExitErrHandler: func(*cli.Context, error) {},
		// A prompt or a path may contain commas: repeat a flag instead.
		DisableSliceFlagSeparator: true,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "verbose", Usage: "log debug messages, including llama.cpp's"},
		},
		Before: func(c *cli.Context) error {
			level := slog.LevelWarn
			if c.Bool("verbose") {
				level = slog.LevelDebug
			}
			slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
			return nil
		},
		Commands: []*cli.Command{
			versionCommand(),
			demoCommand(),
			generateCommand(),
			scoreCommand(),
			envsCommand(),
			initModelCommand(),
			modelsCommand(),
			quantizeCommand(),
			benchCommand(),
			sftCommand(), pretrainCommand(),
			trainCommand(), evalCommand(), reportCommand(), sweepCommand(), inspectCommand(), critiqueCommand(),
		},
	}
}
