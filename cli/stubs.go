package cli

// Placeholders replaced by each subcommand's own file as it lands; each
// returns an error so that nothing pretends to work.

func runDemo(env *Env, args []string) error   { return errNotYet("demo") }
