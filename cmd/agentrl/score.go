package main

import (
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/llm"
)

func scoreCommand() *cli.Command {
	return &cli.Command{
		Name:  "score",
		Usage: "log-probability of each token of a continuation given a prompt",
		Flags: append(modelFlags(true),
			&cli.StringFlag{Name: "prompt", Aliases: []string{"p"}, Usage: "prompt text", Required: true},
			&cli.StringSliceFlag{Name: "continuation", Aliases: []string{"c"}, Usage: "continuation to score (repeatable: scored together)", Required: true},
			&cli.BoolFlag{Name: "chat", Usage: "wrap the prompt as a user message in the model's chat template"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		),
		Action: func(c *cli.Context) error {
			conts := c.StringSlice("continuation")
			l, err := openModel(c, min(len(conts), 64))
			if err != nil {
				return err
			}
			defer l.Close()
			prompt := c.String("prompt")
			if c.Bool("chat") {
				prompt = l.model.RenderChat(userTurn(prompt), true)
			}
			reqs := make([]llm.ScoreRequest, len(conts))
			for i, cont := range conts {
				reqs[i] = llm.ScoreRequest{Prompt: prompt, Continuation: cont}
			}
			res, err := l.engine.Score(c.Context, reqs, llm.CallOptions{Adapters: l.adapters})
			if err != nil {
				return err
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"model": l.model.Info().Path, "scores": res})
			}
			for i, r := range res {
				fmt.Fprintf(c.App.Writer, "continuation %d: %d tokens, log-probability %.4f\n", i, len(r.Tokens), r.Sum)
				for k, t := range r.Tokens {
					piece, _ := l.model.Detokenize([]int32{t}, true)
					fmt.Fprintf(c.App.Writer, "  %6d %-16q %9.4f\n", t, piece, r.LogProbs[k])
				}
			}
			return nil
		},
	}
}

func userTurn(text string) []chat.Message {
	return []chat.Message{{Role: chat.User, Content: text}}
}
