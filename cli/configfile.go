package cli

import (
	"os"

	"github.com/batchprep/batchprep/graph/config"
)

// readConfig loads the --config file at path, a Python config (.py) with
// the interpreter and time limit of BATCHPREP_PYTHON and
// BATCHPREP_PYTHON_TIMEOUT (docs/config.md, "Python configs").
func readConfig(env *Env, path string) (*config.Config, error) {
	opts, err := config.OptionsFromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	return config.LoadWith(env.Ctx, path, opts)
}
