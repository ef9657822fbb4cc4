package workshop

import (
	"net"
	"strconv"
)

// nextPort suggests the port after addr's.
func nextPort(addr string) string {
	h, p, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(p)
	if err != nil || perr != nil || n <= 0 || n >= 65535 {
		return "127.0.0.1:2223"
	}
	return net.JoinHostPort(h, strconv.Itoa(n+1))
}

// Exposed reports whether the server listens beyond this machine's
// loopback: then anyone who can reach it may try the join code.
func (w *Workshop) Exposed() bool {
	h, _, _ := net.SplitHostPort(w.cfg.Addr)
	if h == "localhost" {
		return false
	}
	ip := net.ParseIP(h)
	return ip == nil || !ip.IsLoopback()
}

// Join is the ssh commands to give the room: one per address the server
// can be reached at (every interface's, when it listens on all of them).
func (w *Workshop) Join() []string {
	h, _, _ := net.SplitHostPort(w.cfg.Addr)
	_, port, _ := net.SplitHostPort(w.ln.Addr().String())
	hosts := []string{h}
	if ip := net.ParseIP(h); h == "" || ip != nil && ip.IsUnspecified() {
		hosts = interfaceAddrs()
	}
	var out []string
	for _, host := range hosts {
		if port == "22" {
			out = append(out, "ssh "+host)
		} else {
			out = append(out, "ssh -p "+port+" "+host)
		}
	}
	return out
}

// interfaceAddrs is this machine's addresses other machines may reach:
// IPv4 first, then global IPv6; "localhost" when there is none.
func interfaceAddrs() []string {
	addrs, _ := net.InterfaceAddrs()
	var v4, v6 []string
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.IsLoopback() || ipn.IP.IsLinkLocalUnicast() {
			continue
		}
		if ipn.IP.To4() != nil {
			v4 = append(v4, ipn.IP.String())
		} else if ipn.IP.IsGlobalUnicast() {
			v6 = append(v6, ipn.IP.String())
		}
	}
	if out := append(v4, v6...); len(out) > 0 {
		return out
	}
	return []string{"localhost"}
}
