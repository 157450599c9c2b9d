package rl

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// resumeMayChange are the settings a resumed run may take with different
// values, because they say how much to do, what the machine offers or
// what to call the run, not what is learnt: another number of iterations
// (Open refuses fewer than those finished), other threads, sequences,
// cache and memory bounds, another evaluation schedule, another label. A key ending in "." covers its whole section.
var resumeMayChange = []string{
	"iterations", "threads", "rollout.parallel", "rollout.kv_cache_mib", "lora.memory_mib", "eval.", "label",
}

// algorithmSections are the sections of Config that only the algorithm of
// the same name reads.
var algorithmSections = []string{"sft", "grpo", "ppo", "eto", "stepagent", "nlac"}

// checkResumedConfig refuses to resume the run in dir, which stands at
// st, with settings that differ from those it was started with: its
// checkpoints, metrics and config.yaml would then describe a run that
// never happened.
func checkResumedConfig(dir string, cfg Config, st State) error {
	changed, err := changedSettings(dir, cfg, st)
	if err != nil {
		return fmt.Errorf("--resume: %w", err)
	}
	if len(changed) == 0 {
		return nil
	}
	return fmt.Errorf("%s was started with other settings than this resume asks for (%s); resume it with the settings of %s, or start a new run in another directory (init_adapter can start it from this run's adapter)",
		dir, strings.Join(changed, "; "), filepath.Join(dir, "config.yaml"))
}

// changedSettings lists, as "key: was, now v", the settings of cfg that
// differ from those the run in dir (standing at st) was started with and
// may not change on resume. Besides resumeMayChange, the sections of other
// algorithms may differ (a run reads only its own), and init_adapter once
// the actor has started from it (a sweep moved elsewhere names it by
// another path).
func changedSettings(dir string, cfg Config, st State) ([]string, error) {
	was, err := runSettings(dir)
	if err != nil {
		return nil, err
	}
	return settingsChanged(was, cfg, st.WarmStarted || st.Iteration > 0)
}

// settingsChanged lists the settings of cfg that differ from was (a run's
// settings as flatConfig gives them) and may not change on resume;
// started says that the actor has started from init_adapter.
func settingsChanged(was map[string]string, cfg Config, started bool) ([]string, error) {
	now, err := flatConfig(cfg)
	if err != nil {
		return nil, err
	}
	mayChange := slices.Clone(resumeMayChange)
	for _, alg := range algorithmSections {
		if alg != cfg.Algorithm {
			mayChange = append(mayChange, alg+".")
		}
	}
	if started {
		mayChange = append(mayChange, "init_adapter")
	}
	return diffSettings(was, now, mayChange), nil
}

// runSettings is the configuration of the run in dir as flatConfig gives
// it.
func runSettings(dir string) (map[string]string, error) {
	cfg, err := LoadConfig(filepath.Join(dir, "config.yaml"), nil)
	if err != nil {
		return nil, err
	}
	return flatConfig(cfg)
}

// diffSettings lists, sorted, as "key: was, now v", the settings of now
// that differ from was's, but those mayChange covers (coversKey) and
// paths that name the same file.
func diffSettings(was, now map[string]string, mayChange []string) []string {
	var changed []string
	for key, v := range now {
		if was[key] != v && !sameFile(was[key], v) && !slices.ContainsFunc(mayChange, func(k string) bool { return coversKey(k, key) }) {
			changed = append(changed, fmt.Sprintf("%s: %s, now %s", key, was[key], v))
		}
	}
	slices.Sort(changed)
	return changed
}

// coversKey tells whether the setting or section k (ending in ".") holds
// key.
func coversKey(k, key string) bool {
	return key == k || strings.HasSuffix(k, ".") && strings.HasPrefix(key, k)
}

// sameFile tells whether two settings name one existing file by two
// paths (relative from another directory, or absolute).
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// flatConfig is the configuration as dotted keys (rollout.tasks) and
// their values as config.yaml writes them.
func flatConfig(c Config) (map[string]string, error) {
	text, err := c.YAML()
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(text, &root); err != nil {
		return nil, err
	}
	flat := map[string]string{}
	var walk func(prefix string, n *yaml.Node)
	walk = func(prefix string, n *yaml.Node) {
		switch n.Kind {
		case yaml.DocumentNode:
			walk(prefix, n.Content[0])
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(prefix+n.Content[i].Value+".", n.Content[i+1])
			}
		case yaml.SequenceNode:
			values := make([]string, len(n.Content))
			for i, item := range n.Content {
				values[i] = item.Value
			}
			flat[strings.TrimSuffix(prefix, ".")] = "[" + strings.Join(values, ", ") + "]"
		default:
			flat[strings.TrimSuffix(prefix, ".")] = n.Value
		}
	}
	walk("", &root)
	return flat, nil
}
