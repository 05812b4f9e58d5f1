package config

import "net/netip"

// parsePrefix reads an IP address (a prefix of its full length) or a CIDR prefix.
func parsePrefix(s string) (netip.Prefix, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return p.Masked(), nil
}

// TrustedPrefixes are TrustedProxies parsed (Load has checked each).
func (s Server) TrustedPrefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range s.TrustedProxies {
		if pr, err := parsePrefix(p); err == nil {
			out = append(out, pr)
		}
	}
	return out
}
