package queue

// Exported for the tests of package queue_test.
var (
	EncodeItems = encodeItems
	DecodeItems = decodeItems
)
