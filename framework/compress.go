package framework

import (
	"errors"
	"fmt"

	"github.com/gocurator/curator/internal/gzipcodec"
)

// Compression compresses node data on its way to the server and
// decompresses it on the way back: Curator's CompressionProvider. path is
// the node's path as the caller named it (without the namespace), for codecs
// that treat parts of the tree differently. Implementations must be safe
// for concurrent use. The client's codec is set with WithCompression
// (default Gzip); Compressed, Decompressed and WithCompressionEnabled say
// when it is used.
type Compression interface {
	// Compress returns data compressed.
	Compress(path string, data []byte) ([]byte, error)
	// Decompress returns the data that Compress made data from.
	Decompress(path string, data []byte) ([]byte, error)
}

// ErrCompression wraps the error of a codec that could not compress or
// decompress a node's data, such as a Decompressed read of a node whose data
// is not compressed.
var ErrCompression = errors.New("curator: compression")

// Gzip returns the codec of Curator's GzipCompressionProvider: standard gzip
// (RFC 1952) at the default level, so that nodes written by either library
// are read by the other.
func Gzip() Compression { return gzipcodec.Codec{} }

// Compression returns the client's codec (WithCompression; Gzip by default)
// and whether its reads and writes use it unless told otherwise
// (WithCompressionEnabled). It is for code that reads data as stored
// (Uncompressed) and decodes it itself, such as a cache that keeps a node
// whose data does not decode rather than fail its read. A nil client
// reports Gzip and false.
func (c *Client) Compression() (codec Compression, byDefault bool) {
	if c == nil {
		return Gzip(), false
	}
	return c.opts.compression, c.opts.compressAll
}

// compressChoice is one call's choice: the client's default, or forced.
type compressChoice uint8

const (
	compressDefault compressChoice = iota // as WithCompressionEnabled says
	compressOn
	compressOff
)

// on reports whether the call compresses (or decompresses), given the
// client's default.
func (ch compressChoice) on(byDefault bool) bool {
	return ch == compressOn || ch == compressDefault && byDefault
}

// compress applies the client's codec to data written at path when ch says
// so.
func (c *Client) compress(ch compressChoice, path string, data []byte) ([]byte, error) {
	if !ch.on(c.opts.compressAll) {
		return data, nil
	}
	out, err := c.opts.compression.Compress(path, data)
	if err != nil {
		return nil, fmt.Errorf("%w: compress: %w", ErrCompression, err)
	}
	return out, nil
}

// decompress undoes compress on data read at path when ch says so.
func (c *Client) decompress(ch compressChoice, path string, data []byte) ([]byte, error) {
	if !ch.on(c.opts.compressAll) {
		return data, nil
	}
	out, err := c.opts.compression.Decompress(path, data)
	if err != nil {
		return nil, fmt.Errorf("%w: decompress: %w", ErrCompression, err)
	}
	return out, nil
}

// WriteOption is an option of both Create and Set (and of CreateOp and
// SetOp in a transaction).
type WriteOption interface {
	CreateOption
	SetOption
}

// CompressionOption is an option of Create, Set and the reads.
type CompressionOption interface {
	CreateOption
	SetOption
	GetOption
}

// compressOption forces a call's compression choice.
type compressOption compressChoice

func (x compressOption) applyCreate(o *createOptions) error {
	o.compress = compressChoice(x)
	return nil
}

func (x compressOption) applySet(o *setOptions) error {
	o.compress = compressChoice(x)
	return nil
}

func (x compressOption) applyGet(o *getOptions) error {
	o.decompress = compressChoice(x)
	return nil
}

// decompressOption is compressOption for reads only.
type decompressOption compressChoice

func (x decompressOption) applyGet(o *getOptions) error {
	o.decompress = compressChoice(x)
	return nil
}

// Compressed makes Create or Set (or CreateOp, SetOp) write data compressed
// with the client's codec (Curator's compressed()). The size limit of
// WithJuteMaxBuffer applies to the compressed data. A codec error fails the
// call before anything is sent, with an error wrapping ErrCompression.
func Compressed() WriteOption { return compressOption(compressOn) }

// Decompressed makes Get, GetW or GetWOrdered return the node's data
// decompressed with the client's codec (Curator's decompressed()). Data the
// codec cannot read fails the call with an error wrapping ErrCompression
// (the read is not retried: the node stays as it is), and the watch such a
// GetW set is given back (see Unwatch).
func Decompressed() GetOption { return decompressOption(compressOn) }

// Uncompressed makes one call write or read the data as it is, for a client
// made WithCompressionEnabled (Curator 5.5's uncompressed() and
// undecompressed()).
func Uncompressed() CompressionOption { return compressOption(compressOff) }

// WithCompression sets the codec of Compressed and Decompressed (Curator's
// compressionProvider; default Gzip). p must not be nil.
func WithCompression(p Compression) Option {
	return func(o *options) error {
		if p == nil {
			return invalid("nil compression")
		}
		o.compression = p
		return nil
	}
}

// WithCompressionEnabled makes every Create, Set, CreateOp and SetOp write
// compressed data and every Get, GetW and GetWOrdered decompress it, unless
// the call says Uncompressed (Curator 5.5's enableCompression). Recipes
// read and write through these calls, so their nodes are compressed too:
// peers on the same paths must agree.
func WithCompressionEnabled() Option {
	return func(o *options) error {
		o.compressAll = true
		return nil
	}
}
