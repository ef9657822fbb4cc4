package mirrortest

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"hash/crc64"
)

// StoredXZ is data as an .xz file (one stream, one block, a CRC64 check)
// whose LZMA2 filter holds it in uncompressed chunks of up to 64 KiB, as
// the xz file format allows (https://tukaani.org/xz/xz-file-format.txt,
// and LZMA2's chunk control bytes 0x01 and 0x02). Every xz reader reads it
// (xz -t, liblzma, github.com/ulikunitz/xz), checking its headers' CRC32s
// and its block's CRC64 as in any .xz file; reading it is a copy, where
// LZMA decoding the same bytes takes seconds under the race detector.
func StoredXZ(data []byte) []byte {
	le := binary.LittleEndian
	var out bytes.Buffer
	flags := []byte{0x00, 0x04} // check: CRC64
	out.Write([]byte{0xFD, '7', 'z', 'X', 'Z', 0x00})
	out.Write(flags)
	out.Write(le.AppendUint32(nil, crc32.ChecksumIEEE(flags)))

	// Block header: its size, no optional sizes, one filter: LZMA2
	// (0x21) with one byte of properties (a 4 KiB dictionary), padded to
	// four bytes before its CRC32.
	hdr := []byte{0, 0x00, 0x21, 0x01, 0x00}
	for (len(hdr)+4)%4 != 0 {
		hdr = append(hdr, 0)
	}
	hdr[0] = byte((len(hdr)+4)/4 - 1)
	out.Write(hdr)
	out.Write(le.AppendUint32(nil, crc32.ChecksumIEEE(hdr)))
	unpadded := len(hdr) + 4

	start := out.Len()
	for i := 0; i < len(data); i += 1 << 16 {
		chunk := data[i:min(i+1<<16, len(data))]
		control := byte(0x02) // uncompressed, no dictionary reset
		if i == 0 {
			control = 0x01 // uncompressed, dictionary reset
		}
		out.Write([]byte{control, byte((len(chunk) - 1) >> 8), byte(len(chunk) - 1)})
		out.Write(chunk)
	}
	out.WriteByte(0x00) // end of the LZMA2 data
	unpadded += out.Len() - start + 8
	for (out.Len()-start)%4 != 0 {
		out.WriteByte(0)
	}
	out.Write(le.AppendUint64(nil, crc64.Checksum(data, crc64.MakeTable(crc64.ECMA))))

	// Index: one record (the block's unpadded and uncompressed sizes).
	index := []byte{0x00}
	index = binary.AppendUvarint(index, 1)
	index = binary.AppendUvarint(index, uint64(unpadded))
	index = binary.AppendUvarint(index, uint64(len(data)))
	for len(index)%4 != 0 {
		index = append(index, 0)
	}
	index = le.AppendUint32(index, crc32.ChecksumIEEE(index))
	out.Write(index)

	// Stream footer: CRC32 of the backward size and flags, then them.
	footer := le.AppendUint32(nil, uint32(len(index)/4-1))
	footer = append(footer, flags...)
	out.Write(le.AppendUint32(nil, crc32.ChecksumIEEE(footer)))
	out.Write(footer)
	out.Write([]byte{'Y', 'Z'})
	return out.Bytes()
}
