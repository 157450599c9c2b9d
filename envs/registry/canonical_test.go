package registry_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/registry"
)

// respace rewrites an expert action the way a model might and the
// environment accepts alike: other case and extra spaces where the
// environment ignores them, and a thought before "Action:".
var respace = map[string]func(t *testing.T, action string) string{
	"webshop": func(t *testing.T, a string) string { // verb[argument]: case and spaces ignored
		verb, arg, _ := strings.Cut(strings.TrimSuffix(a, "]"), "[")
		return strings.ToUpper(verb) + " [ " + strings.ToUpper(strings.ReplaceAll(arg, " ", "  ")) + " ]"
	},
	"alfworld":  upperSpaced,
	"twentyq":   upperSpaced,
	"math":      upperSpaced, // the whole reply is graded by its final number
	"math-calc": func(t *testing.T, a string) string { return upperSpaced(t, strings.Replace(a, "[", " [ ", 1)) },
	"tauretail": func(t *testing.T, a string) string {
		// The tool name's case and the JSON layout do not matter, nor the
		// case of a message; ids and other values are compared exactly.
		i := strings.IndexByte(a, '{')
		name, args := a[:i], map[string]any{}
		if err := json.Unmarshal([]byte(a[i:]), &args); err != nil {
			t.Fatalf("expert action %q: %v", a, err)
		}
		if c, ok := args["content"].(string); ok && name == "respond" {
			args["content"] = strings.ToUpper(c)
		}
		// The keys in reverse order, spaced out, on the one action line.
		keys := slices.Sorted(maps.Keys(args))
		slices.Reverse(keys)
		fields := make([]string, len(keys))
		for j, k := range keys {
			kj, _ := json.Marshal(k)
			vj, err := json.Marshal(args[k])
			if err != nil {
				t.Fatal(err)
			}
			fields[j] = string(kj) + " :\t" + string(vj)
		}
		return strings.ToUpper(name) + " ( {  " + strings.Join(fields, " ,  ") + "  } )"
	},
}

func upperSpaced(t *testing.T, a string) string {
	return strings.ToUpper(strings.ReplaceAll(a, " ", "  "))
}

// TestExpertActionsAreEquivalentToTheirRewritings plays a few train
// episodes of every built-in environment with its expert and checks that
// each expert action is equivalent to itself, to its canonical form and to a
// rewriting the environment accepts alike.
func TestExpertActionsAreEquivalentToTheirRewritings(t *testing.T) {
	for _, name := range registry.Names() {
		t.Run(name, func(t *testing.T) {
			rewrite, ok := respace[name]
			if !ok {
				t.Fatalf("no rewriting for %s; add one", name)
			}
			factory, err := registry.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			env := factory()
			if _, ok := env.(envs.Canonicalizer); !ok {
				t.Fatalf("%s does not implement envs.Canonicalizer", name)
			}
			expert := env.(envs.Expert)
			for seed := range int64(3) {
				if _, err := env.Reset(envs.Train, seed); err != nil {
					t.Fatal(err)
				}
				for steps := 0; steps < env.Spec().MaxSteps; steps++ {
					a, err := expert.ExpertAction()
					if err != nil {
						t.Fatal(err)
					}
					canonical := envs.Canonical(env, a)
					for _, b := range []string{a, canonical, "Thought: the expert knows.\nAction: " + rewrite(t, a)} {
						if !envs.Equivalent(env, a, b) {
							t.Errorf("seed %d: %q is not equivalent to %q (%q / %q)", seed, a, b, canonical, envs.Canonical(env, b))
						}
					}
					if fresh := factory(); envs.Canonical(fresh, a) != canonical {
						t.Errorf("seed %d: the canonical form of %q depends on the instance's state", seed, a)
					}
					res, err := env.Step(a)
					if err != nil {
						t.Fatal(err)
					}
					if res.Done {
						break
					}
				}
			}
		})
	}
}
