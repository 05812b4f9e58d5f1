package store

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
)

const (
	fileMagic    = "MGR1"
	fileFixed    = 32 // magic, flags, padding, expiry, four lengths
	fileHeadCRC  = 4
	fileTailCRC  = 4
	flagDeleted  = 1
	fileFanout   = 256
	fileSuffix   = ".rec"
	maxFieldSize = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var errCorrupt = errors.New("store: corrupt record file")

// encodeFile is a record's file (see File's doc).
func encodeFile(k fileKey, parent string, data []byte, expires int64, flags byte) []byte {
	names := len(k.owner) + len(k.id) + len(parent)
	b := make([]byte, fileFixed+fileHeadCRC+names+len(data)+fileTailCRC)
	copy(b, fileMagic)
	b[4] = flags
	binary.LittleEndian.PutUint64(b[8:], uint64(expires))
	binary.LittleEndian.PutUint32(b[16:], uint32(len(k.owner)))
	binary.LittleEndian.PutUint32(b[20:], uint32(len(k.id)))
	binary.LittleEndian.PutUint32(b[24:], uint32(len(parent)))
	binary.LittleEndian.PutUint32(b[28:], uint32(len(data)))
	at := fileFixed + fileHeadCRC
	at += copy(b[at:], k.owner)
	at += copy(b[at:], k.id)
	at += copy(b[at:], parent)
	binary.LittleEndian.PutUint32(b[fileFixed:], headCRC(b[:fileFixed], b[fileFixed+fileHeadCRC:at]))
	at += copy(b[at:], data)
	binary.LittleEndian.PutUint32(b[at:], crc32.Checksum(data, castagnoli))
	return b
}

func headCRC(fixed, names []byte) uint32 {
	return crc32.Update(crc32.Checksum(fixed, castagnoli), castagnoli, names)
}

// parseFixed checks the fixed part of a file's header and returns the lengths in it.
func parseFixed(b []byte) (lo, li, lp, ld int, err error) {
	if len(b) < fileFixed+fileHeadCRC || string(b[:4]) != fileMagic {
		return 0, 0, 0, 0, errCorrupt
	}
	l := func(at int) int { return int(binary.LittleEndian.Uint32(b[at:])) }
	lo, li, lp, ld = l(16), l(20), l(24), l(28)
	if lo > maxFieldSize || li > maxFieldSize || lp > maxFieldSize || ld > maxFieldSize {
		return 0, 0, 0, 0, errCorrupt
	}
	return lo, li, lp, ld, nil
}

// readHeader reads a record file's header into an entry (no path, seq or links).
func readHeader(path string) (*fileEntry, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	fixed := make([]byte, fileFixed+fileHeadCRC)
	if _, err := io.ReadFull(fh, fixed); err != nil {
		return nil, errCorrupt
	}
	lo, li, lp, ld, err := parseFixed(fixed)
	if err != nil {
		return nil, err
	}
	size := int64(fileFixed + fileHeadCRC + lo + li + lp + ld + fileTailCRC)
	if st.Size() != size {
		return nil, errCorrupt
	}
	names := make([]byte, lo+li+lp)
	if _, err := io.ReadFull(fh, names); err != nil {
		return nil, errCorrupt
	}
	if headCRC(fixed[:fileFixed], names) != binary.LittleEndian.Uint32(fixed[fileFixed:]) {
		return nil, errCorrupt
	}
	return &fileEntry{
		key:     fileKey{string(names[:lo]), string(names[lo : lo+li])},
		parent:  string(names[lo+li:]),
		expires: int64(binary.LittleEndian.Uint64(fixed[8:])),
		deleted: fixed[4]&flagDeleted != 0,
		size:    size,
		hi:      -1,
	}, nil
}

// readRecord reads a record file whole and checks it is key's.
func readRecord(path string, key fileKey) (parent string, data []byte, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	return parseRecord(b, key)
}

func parseRecord(b []byte, key fileKey) (parent string, data []byte, err error) {
	lo, li, lp, ld, err := parseFixed(b)
	if err != nil {
		return "", nil, err
	}
	at := fileFixed + fileHeadCRC
	if len(b) != at+lo+li+lp+ld+fileTailCRC {
		return "", nil, errCorrupt
	}
	names := b[at : at+lo+li+lp]
	if headCRC(b[:fileFixed], names) != binary.LittleEndian.Uint32(b[fileFixed:]) {
		return "", nil, errCorrupt
	}
	if string(names[:lo]) != key.owner || string(names[lo:lo+li]) != key.id {
		return "", nil, errCorrupt // another record's file: not this one
	}
	data = b[at+lo+li+lp : at+lo+li+lp+ld]
	if crc32.Checksum(data, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-fileTailCRC:]) {
		return "", nil, errCorrupt
	}
	return string(names[lo+li:]), data, nil
}

// writeTemp writes b to a new file in dir, fsynced, and returns its path.
func writeTemp(dir string, b []byte) (string, error) {
	fh, err := os.CreateTemp(dir, "put-*")
	if err != nil {
		return "", err
	}
	_, err = fh.Write(b)
	if err == nil {
		err = fh.Sync()
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(fh.Name())
		return "", err
	}
	return fh.Name(), nil
}

// syncDir fsyncs a folder, so that a rename or removal in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
