package cli

import "fmt"

func errNotYet(name string) error { return fmt.Errorf("%s is not implemented yet", name) }
