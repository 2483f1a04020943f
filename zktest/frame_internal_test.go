package zktest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"testing"
)

func TestParseFourLetterAnswers(t *testing.T) {
	tests := []struct {
		name    string
		answer  string
		mode    string
		watches int
		wantErr bool
	}{
		{
			name:    "standalone srvr and wchs",
			answer:  "Zookeeper version: 3.8.0\nLatency min/avg/max: 0/0.0/0\nMode: standalone\nNode count: 5\n1 connections watching 1 paths\nTotal watches:1\n",
			mode:    "standalone",
			watches: 1,
		},
		{
			name:    "follower",
			answer:  "Mode: follower\n0 connections watching 0 paths\nTotal watches:0\n",
			mode:    "follower",
			watches: 0,
		},
		{
			name:    "not serving",
			answer:  "This ZooKeeper instance is not currently serving requests\n",
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseMode(tt.answer); got != tt.mode {
				t.Errorf("parseMode = %q, want %q", got, tt.mode)
			}
			n, err := parseTotalWatches(tt.answer)
			if (err != nil) != tt.wantErr || n != tt.watches {
				t.Errorf("parseTotalWatches = %d, %v; want %d, error %v", n, err, tt.watches, tt.wantErr)
			}
		})
	}
}

func TestOpcodes(t *testing.T) {
	tests := []struct {
		op     int32
		create bool
	}{
		{1, true}, {15, true}, {19, true}, {21, true},
		{14, false}, // multi
		{2, false},  // delete
		{4, false},  // getData
		{-11, false},
	}
	for _, tt := range tests {
		if got := isCreate(tt.op); got != tt.create {
			t.Errorf("isCreate(%d) = %v, want %v", tt.op, got, tt.create)
		}
	}
}

func TestFirstBytesTellSessionsFromFourLetterWords(t *testing.T) {
	tests := []struct {
		head    []byte
		session bool
	}{
		{[]byte("ruok"), false},
		{[]byte("srvr"), false},
		{[]byte("wchs"), false},
		{be32(48), true}, // a ConnectRequest
		{be32(0), false},
		{be32(-1), false},
	}
	for _, tt := range tests {
		if got := plausibleLength(tt.head); got != tt.session {
			t.Errorf("plausibleLength(%q) = %v, want %v", tt.head, got, tt.session)
		}
	}
}

func TestReadFrame(t *testing.T) {
	// A create request (xid 7, opcode 1) then a reply (xid 7).
	req := append(be32(12), append(be32(7), append(be32(opCreate), be32(0)...)...)...)
	reply := append(be32(16), append(be32(7), make([]byte, 12)...)...)
	r := bufio.NewReader(bytes.NewReader(append(req, reply...)))

	frame, err := readFrame(r, nil)
	if err != nil || !bytes.Equal(frame, req) {
		t.Fatalf("first frame = %x, %v; want %x", frame, err, req)
	}
	if xid, op, ok := requestHeader(frame); !ok || xid != 7 || op != opCreate {
		t.Fatalf("requestHeader = %d, %d, %v", xid, op, ok)
	}
	frame, err = readFrame(r, frame)
	if err != nil || !bytes.Equal(frame, reply) {
		t.Fatalf("second frame = %x, %v; want %x", frame, err, reply)
	}
	if xid, ok := replyXid(frame); !ok || xid != 7 {
		t.Fatalf("replyXid = %d, %v", xid, ok)
	}
	if _, err := readFrame(bufio.NewReader(bytes.NewReader(be32(-5))), nil); err == nil {
		t.Fatal("negative length accepted")
	}
}

func be32(v int32) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(v))
}
