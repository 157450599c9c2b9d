package rl

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// resumeMayChange are the settings a resumed run may take with different
// values, because they say how much to do or what the machine offers, not
// what is learned: more iterations, other threads, sequences, cache and
// memory bounds, another evaluation schedule. A key ending in "." covers
// its whole section.
var resumeMayChange = []string{
	"iterations", "threads", "rollout.parallel", "rollout.kv_cache_mib", "lora.memory_mib", "eval.",
}

// checkResumedConfig refuses to resume the run in dir with settings that
// differ from those it was started with: its checkpoints, metrics and
// config.yaml would then describe a run that never happened. Runs without
// a config.yaml (none was written yet) have nothing to differ from.
func checkResumedConfig(dir string, cfg Config) error {
	path := filepath.Join(dir, "config.yaml")
	started, err := LoadConfig(path, nil)
	if err != nil {
		return fmt.Errorf("--resume: %w", err)
	}
	was, err := flatConfig(started)
	if err != nil {
		return err
	}
	now, err := flatConfig(cfg)
	if err != nil {
		return err
	}
	var changed []string
	for key, v := range now {
		if was[key] != v && !mayChangeOnResume(key) {
			changed = append(changed, fmt.Sprintf("%s: %s, now %s", key, was[key], v))
		}
	}
	if len(changed) == 0 {
		return nil
	}
	slices.Sort(changed)
	return fmt.Errorf("%s was started with other settings than this resume asks for (%s); resume it with the settings of %s, or start a new run in another directory (init_adapter can start it from this run's adapter)",
		dir, strings.Join(changed, "; "), path)
}

func mayChangeOnResume(key string) bool {
	for _, k := range resumeMayChange {
		if key == k || strings.HasSuffix(k, ".") && strings.HasPrefix(key, k) {
			return true
		}
	}
	return false
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
