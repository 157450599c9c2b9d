// Package registry names the built-in environments. Each simulator adds
// itself from a file of its own in this package (webshop.go, alfworld.go,
// ...), so that adding one never touches another's code.
package registry

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentrl/agentrl/envs"
)

// Factory makes a fresh, independent instance of an environment.
type Factory func() envs.Env

var factories = map[string]Factory{}

// add is called from the per-environment files' init functions.
func add(name string, f Factory) {
	if _, dup := factories[name]; dup {
		panic("registry: environment " + name + " registered twice")
	}
	factories[name] = f
}

// Names lists the built-in environments in sorted order.
func Names() []string {
	names := make([]string, 0, len(factories))
	for n := range factories {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the factory of the named environment.
func Lookup(name string) (Factory, error) {
	f, ok := factories[name]
	if !ok {
		return nil, fmt.Errorf("unknown environment %q (built in: %s)", name, strings.Join(Names(), ", "))
	}
	return f, nil
}
