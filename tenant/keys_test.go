package tenant

import (
	"strings"
	"testing"
)

func TestHashKey_IsSHA256InHex(t *testing.T) {
	// FIPS 180-2's test vector for "abc".
	const want = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := HashKey("abc"); got != want {
		t.Errorf("HashKey(abc) = %s, want %s", got, want)
	}
	h, err := ParseHash(want)
	if err != nil || h != HashOf("abc") {
		t.Errorf("ParseHash(%s) = %x, %v", want, h, err)
	}
}

func TestParseHash_RefusesAnythingButSha256Hex(t *testing.T) {
	for _, s := range []string{
		"", "sk-plain-key", "sha256:", "sha256:abc",
		"SHA256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"sha256:zz7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad00",
		"md5:900150983cd24fb0d6963f7d28e17f72",
	} {
		if _, err := ParseHash(s); err == nil {
			t.Errorf("ParseHash(%q) accepted", s)
		}
	}
}

func TestKeyring_LookupFindsOnlyTheKeyWhoseHashMatches(t *testing.T) {
	ring, err := NewKeyring([]Key{
		{Name: "alice", Hash: HashOf("alice-secret-0123456789")},
		{Name: "bob", Hash: HashOf("bob-secret-0123456789")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ presented, want string }{
		{"alice-secret-0123456789", "alice"},
		{"bob-secret-0123456789", "bob"},
		{"alice-secret-012345678", ""},   // a prefix
		{"alice-secret-01234567890", ""}, // longer
		{"", ""},
		{HashKey("alice-secret-0123456789"), ""}, // the hash is not the key
	} {
		got := ""
		if k := ring.Lookup(tt.presented); k != nil {
			got = k.Name
		}
		if got != tt.want {
			t.Errorf("Lookup(%q) = %q, want %q", tt.presented, got, tt.want)
		}
	}
}

func TestNewKeyring_RefusesTwoNamesForOneKey(t *testing.T) {
	_, err := NewKeyring([]Key{{Name: "a", Hash: HashOf("k")}, {Name: "b", Hash: HashOf("k")}})
	if err == nil || !strings.Contains(err.Error(), "same key") {
		t.Errorf("err = %v", err)
	}
	if _, err := NewKeyring([]Key{{Name: "a", Hash: HashOf("k")}, {Name: "a", Hash: HashOf("j")}}); err == nil {
		t.Error("two keys with one name accepted")
	}
}

func TestKey_AllowsModelAndBackend(t *testing.T) {
	k := &Key{Models: []string{"m1"}, Backends: []string{"gpu"}}
	if !k.AllowsModel("m1") || k.AllowsModel("m2") {
		t.Error("models: want only m1")
	}
	if !k.AllowsBackend("gpu") || k.AllowsBackend("cloud") {
		t.Error("backends: want only gpu")
	}
	open := &Key{}
	if !open.AllowsModel("anything") || !open.AllowsBackend("anything") {
		t.Error("a key without lists must allow everything")
	}
	if !(&Key{Models: []string{"*"}}).AllowsModel("x") {
		t.Error(`models ["*"] must allow any model`)
	}
}
