package fakeweb

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync"
)

const (
	bombSegment  = 4_000_000
	bombSegments = 250 // 1,000,000,000 bytes inflated
	bombPrefix   = "<!DOCTYPE html>\n<html>\n<head>\n<title>Small page</title>\n</head>\n<body>\n"
)

// gzipBomb returns a gzip stream of bombSegments*bombSegment bytes: the
// prefix, then spaces. Deflate cannot beat about 1,030:1, so 1 GB costs about
// 1 MB on the wire; compressing a gigabyte would take seconds, so one 4 MB
// segment of spaces is compressed after a sync flush (which byte-aligns it and
// makes it depend only on a window full of spaces) and its bytes are repeated.
// It is built once, on first use.
var gzipBomb = sync.OnceValues(func() ([]byte, error) {
	spaces := bytes.Repeat([]byte{' '}, bombSegment)
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("fakeweb: gzip bomb: %w", err)
	}
	first := append([]byte(bombPrefix), spaces[len(bombPrefix):]...)
	if _, err := zw.Write(first); err != nil {
		return nil, fmt.Errorf("fakeweb: gzip bomb: %w", err)
	}
	if err := zw.Flush(); err != nil {
		return nil, fmt.Errorf("fakeweb: gzip bomb: %w", err)
	}
	head := len(buf.Bytes())
	if _, err := zw.Write(spaces); err != nil {
		return nil, fmt.Errorf("fakeweb: gzip bomb: %w", err)
	}
	if err := zw.Flush(); err != nil {
		return nil, fmt.Errorf("fakeweb: gzip bomb: %w", err)
	}
	segment := buf.Bytes()[head:]

	out := make([]byte, 0, head+len(segment)*(bombSegments-1)+13)
	out = append(out, buf.Bytes()[:head]...)
	for k := 1; k < bombSegments; k++ {
		out = append(out, segment...)
	}
	// A final, empty stored block ends the deflate stream.
	out = append(out, 0x01, 0x00, 0x00, 0xff, 0xff)

	crc := crc32.ChecksumIEEE(first)
	for k := 1; k < bombSegments; k++ {
		crc = crc32.Update(crc, crc32.IEEETable, spaces)
	}
	out = binary.LittleEndian.AppendUint32(out, crc)
	out = binary.LittleEndian.AppendUint32(out, uint32(uint64(bombSegment)*bombSegments))
	return out, nil
})
