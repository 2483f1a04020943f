// Package gzipcodec is the codec of Curator's GzipCompressionProvider,
// behind framework's Gzip: standard gzip (RFC 1952) at the default level,
// one member with an empty header on the way out, every member on the way
// in (as java.util.zip's GZIPInputStream reads them), so that nodes
// written by either library are read by the other.
package gzipcodec

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Codec is the gzip codec. Its zero value is ready, and it is safe for
// concurrent use.
type Codec struct{}

// writers keeps writers for reuse: a gzip.Writer costs about 800 KiB of
// allocations to make and nothing to Reset.
var writers = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// Compress returns data as one gzip member with an empty header.
func (Codec) Compress(_ string, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	w := writers.Get().(*gzip.Writer)
	defer writers.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Decompress reads every gzip member of data (as java.util.zip's
// GZIPInputStream does) and checks each one's CRC and length.
func (Codec) Decompress(_ string, data []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("not gzip: %w", io.ErrUnexpectedEOF)
		}
		return nil, err
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return out, r.Close()
}
