package rl

import "path/filepath"

// RunConfigs gives the committed-sweeps test (package rl_test, which
// links the algorithms registered outside this package) each run's
// configuration by its directory.
func (s *Sweep) RunConfigs() (map[string]Config, error) {
	out := map[string]Config{}
	for _, c := range s.cells() {
		cfg, err := s.config(c)
		if err != nil {
			return nil, err
		}
		out[filepath.Join(s.Out, c.name())] = cfg
	}
	return out, nil
}

// ChangedSettings lists the settings of b that differ from a's where a
// run started with a would refuse to resume with b (changedSettings), as
// before its first iteration: stricter than later, when init_adapter may
// differ.
func ChangedSettings(a, b Config) ([]string, error) {
	was, err := flatConfig(a)
	if err != nil {
		return nil, err
	}
	return settingsChanged(was, b, false)
}
