package cli

import (
	"net"
	"strconv"
)

// checkListen refuses, as a usage mistake (exit 2), a listen address that
// is not host:port with a port from 0 to 65535, naming the flag and the
// value; the address is then given to net.Listen, whose own text would
// otherwise reach the user ("listen tcp4: address 99999: invalid port").
// serve (--listen, --metrics-listen) and coordinator (--listen) call it
// before listening.
func checkListen(flagName, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("%s %q: want host:port, e.g. 127.0.0.1:7411 (port 0: any free port)", flagName, addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return usagef("%s %q: the port %q is not a number from 0 to 65535", flagName, addr, port)
	}
	return nil
}
