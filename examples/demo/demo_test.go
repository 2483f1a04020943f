package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestDemoNarrationIsTrue runs the demo as `make demo` does (its own
// throwaway ZooKeeper, the job runners as processes) and checks that what
// it says is what its processes printed (issue 36, item 3): it announced
// "Reconnected on the same session" for an outage in which sessions were
// lost, printed Lost with session 0x0, and counted Lost without a word.
func TestDemoNarrationIsTrue(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "demo")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = withoutEnv(os.Environ(), "ZK_SERVERS") // the outages need the demo's own server
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	if problems := checkTranscript(string(out)); len(problems) > 0 {
		t.Errorf("the demo's narration is not what happened:\n  %s\n\ntranscript:\n%s",
			strings.Join(problems, "\n  "), out)
	}
}

// TestCheckTranscriptCatches feeds the checker transcripts with the faults
// the demo had, so that TestDemoNarrationIsTrue can fail.
func TestCheckTranscriptCatches(t *testing.T) {
	const (
		start = `00:00:00.000 a   connection: Connected, session 0x1a, timeout 4s
00:00:00.000 b   connection: Connected, session 0x1b, timeout 4s
`
		cutOK = `00:00:01.000 *** cutting every job runner's connection to ZooKeeper for 1.5s (zktest.Proxy.Cut), ...: expect Suspended, holds ended (StandardPolicy), then Reconnected on the same session
00:00:01.001 a   connection: Suspended, session 0x1a
00:00:01.001 b   connection: Suspended, session 0x1b
00:00:02.500 a   connection: Reconnected, same session 0x1a
00:00:02.500 b   connection: Reconnected, same session 0x1b
00:00:02.501 ***   a: Suspended, Reconnected on the same session 0x1a
00:00:02.501 ***   b: Suspended, Reconnected on the same session 0x1b
00:00:02.501 *** after the 1.5s cut: as announced, every job runner kept its session
`
		stopOK = `00:00:03.000 *** stopping ZooKeeper for 5.5s, more than the session timeout: expect Lost, naming the session, ...
00:00:03.500 a   connection: Suspended, session 0x1a
00:00:03.500 b   connection: Suspended, session 0x1b
00:00:06.500 a   connection: Lost session 0x1a
00:00:06.500 b   connection: Lost session 0x1b
00:00:09.000 a   connection: Reconnected, new session 0x2a
00:00:09.000 b   connection: Reconnected, new session 0x2b
00:00:09.001 ***   a: Suspended, Lost session 0x1a while ZooKeeper was down (its own client gave it up), Reconnected on a new session 0x2a
00:00:09.001 ***   b: Suspended, Lost session 0x1b while ZooKeeper was down (its own client gave it up), Reconnected on a new session 0x2b
00:00:09.001 *** after the ZooKeeper stop: as announced, every job runner lost its session and got a new one
`
		summaryOK = `00:00:10.000 ***   connection states seen: Connected 2, Lost 2, Reconnected 4, Suspended 4
00:00:10.000 ***   sessions lost: 2, all in the ZooKeeper stop (a 0x1a, b 0x1b)
00:00:10.000 *** demo finished
`
	)
	good := start + cutOK + stopOK + summaryOK
	if p := checkTranscript(good); len(p) > 0 {
		t.Fatalf("a true transcript was refused: %q", p)
	}
	tests := []struct {
		name, transcript, want string
	}{
		{"Lost names no session (the demo before)", strings.Replace(good, "Lost session 0x1a", "Lost, session 0x0", 1), "names no session"},
		{"Lost names another session", strings.Replace(good, "a   connection: Lost session 0x1a", "a   connection: Lost session 0x1b", 1), "had session 0x1a"},
		{"same session announced, session lost", strings.Replace(good, `00:00:02.500 a   connection: Reconnected, same session 0x1a`,
			"00:00:02.400 a   connection: Lost session 0x1a\n00:00:02.500 a   connection: Reconnected, new session 0x3a", 1), "announced the same session"},
		{"same session claimed for a new one", strings.Replace(good, "Reconnected, same session 0x1a", "Reconnected, same session 0x9a", 1), "is not the session it had"},
		{"narration contradicts a process", strings.Replace(good, "a: Suspended, Reconnected on the same session 0x1a", "a: Suspended, Reconnected on the same session 0x7a", 1), "narration"},
		{"no verdict after an outage", strings.Replace(good, "as announced, every job runner kept its session", "", 1), "no verdict"},
		{"summary counts Lost wrong", strings.Replace(good, "Lost 2,", "Lost 4,", 1), "counts Lost 4"},
		{"summary does not name a lost session", strings.Replace(good, "(a 0x1a, b 0x1b)", "(a 0x1a)", 1), "does not name b 0x1b"},
		{"not finished", strings.Replace(good, "demo finished", "demo finished with errors", 1), "demo finished"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := checkTranscript(tt.transcript)
			if !strings.Contains(strings.Join(p, "\n"), tt.want) {
				t.Errorf("problems %q, want one containing %q", p, tt.want)
			}
		})
	}
}

var (
	procLineRe   = regexp.MustCompile(`^\S+ (\w+)\s+connection: (.*)$`)
	demoLineRe   = regexp.MustCompile(`^\S+ \*\*\* (.*)$`)
	narrationRe  = regexp.MustCompile(`^  (\w+): (.*)$`)
	lostRe       = regexp.MustCompile(`^Lost session (0x[0-9a-f]+)$`)
	reconnRe     = regexp.MustCompile(`^Reconnected, (same|new) session (0x[0-9a-f]+)$`)
	sessionOfRe  = regexp.MustCompile(`session (0x[0-9a-f]+)`)
	statesSeenRe = regexp.MustCompile(`connection states seen: .*\bLost (\d+)`)
)

// checkTranscript reads the demo's output and returns every place where
// it says something its job runners' lines contradict.
func checkTranscript(out string) []string {
	var problems []string
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	held := map[string]string{} // process -> its live session, "" after Lost
	last := map[string]string{} // process -> the last session it had
	type phase struct {
		name     string // "cut" or "stop"
		lost     map[string][]string
		after    map[string]string // process -> session it reconnected on
		same     map[string]bool
		verdict  bool
		narrated map[string]string
	}
	var cur *phase
	var phases []*phase
	var lostAll []string
	finished := false
	for _, line := range strings.Split(out, "\n") {
		if m := procLineRe.FindStringSubmatch(line); m != nil {
			id, msg := m[1], m[2]
			switch {
			case strings.HasPrefix(msg, "Connected"):
				s := sessionOf(msg)
				held[id], last[id] = s, s
			case strings.HasPrefix(msg, "Lost"):
				lm := lostRe.FindStringSubmatch(msg)
				if lm == nil || isZero(lm[1]) {
					bad("%s: %q names no session", id, msg)
					held[id] = ""
					continue
				}
				if lm[1] != last[id] {
					bad("%s: %q, but it had session %s", id, msg, last[id])
				}
				held[id] = ""
				lostAll = append(lostAll, id+" "+lm[1])
				if cur != nil {
					cur.lost[id] = append(cur.lost[id], lm[1])
				}
			case strings.HasPrefix(msg, "Reconnected"):
				rm := reconnRe.FindStringSubmatch(msg)
				if rm == nil {
					bad("%s: %q says neither same nor new session", id, msg)
					continue
				}
				same, s := rm[1] == "same", rm[2]
				switch {
				case same && s != held[id]:
					bad("%s: %q, but %s is not the session it had (%q)", id, msg, s, held[id])
				case !same && s == last[id]:
					bad("%s: %q, but that is the session it had", id, msg)
				}
				held[id], last[id] = s, s
				if cur != nil {
					if _, ok := cur.after[id]; !ok {
						cur.after[id], cur.same[id] = s, same
					}
				}
			case strings.HasPrefix(msg, "Suspended"):
				if s := sessionOf(msg); s != held[id] {
					bad("%s: %q, but its session is %q", id, msg, held[id])
				}
			}
			continue
		}
		m := demoLineRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		msg := m[1]
		switch {
		case strings.HasPrefix(msg, "cutting every job runner's connection"):
			if !strings.Contains(msg, "Reconnected on the same session") {
				bad("the cut is announced without its outcome: %q", msg)
			}
			cur = &phase{name: "cut", lost: map[string][]string{}, after: map[string]string{}, same: map[string]bool{}, narrated: map[string]string{}}
			phases = append(phases, cur)
		case strings.HasPrefix(msg, "stopping ZooKeeper"):
			cur = &phase{name: "stop", lost: map[string][]string{}, after: map[string]string{}, same: map[string]bool{}, narrated: map[string]string{}}
			phases = append(phases, cur)
		case cur != nil && narrationRe.MatchString(msg):
			nm := narrationRe.FindStringSubmatch(msg)
			cur.narrated[nm[1]] = nm[2]
		case cur != nil && strings.HasPrefix(msg, "after "):
			cur.verdict = strings.Contains(msg, "as announced")
			checkPhase := func(p *phase) {
				for id, said := range p.narrated {
					for _, s := range p.lost[id] {
						if !strings.Contains(said, "Lost session "+s) {
							bad("narration %q does not say %s lost %s", said, id, s)
						}
					}
					if len(p.lost[id]) == 0 && strings.Contains(said, "Lost") {
						bad("narration %q: %s printed no Lost", said, id)
					}
					want := "Reconnected on a new session " + p.after[id]
					if p.same[id] {
						want = "Reconnected on the same session " + p.after[id]
					}
					if !strings.HasSuffix(said, want) {
						bad("narration %q, but %s printed %q", said, id, want)
					}
				}
				if len(p.narrated) == 0 {
					bad("nothing narrated after the %s", p.name)
				}
				for id := range p.after {
					if _, ok := p.narrated[id]; !ok {
						bad("the %s: %s reconnected and the narration does not say how", p.name, id)
					}
				}
			}
			checkPhase(cur)
			if cur.verdict {
				for id := range cur.narrated {
					switch {
					case cur.name == "cut" && (len(cur.lost[id]) > 0 || !cur.same[id]):
						bad("the cut announced the same session, said as announced, but %s lost %v", id, cur.lost[id])
					case cur.name == "stop" && (len(cur.lost[id]) == 0 || cur.same[id]):
						bad("the stop announced a new session, said as announced, but %s kept its session", id)
					}
				}
			}
			cur = nil
		case strings.HasPrefix(msg, "  connection states seen:"):
			sm := statesSeenRe.FindStringSubmatch(msg)
			n := 0
			if sm != nil {
				n, _ = strconv.Atoi(sm[1])
			}
			if n != len(lostAll) {
				bad("the summary counts Lost %d, the processes printed %d", n, len(lostAll))
			}
		case strings.HasPrefix(msg, "  sessions lost:"):
			for _, l := range lostAll {
				if !strings.Contains(msg, l) {
					bad("the summary %q does not name %s", msg, l)
				}
			}
			if len(lostAll) > 0 && !strings.HasPrefix(msg, "  sessions lost: "+strconv.Itoa(len(lostAll))+",") {
				bad("the summary %q does not count %d", msg, len(lostAll))
			}
		case msg == "demo finished":
			finished = true
		}
	}
	if len(phases) != 2 {
		bad("%d outages announced, want 2 (the cut and the ZooKeeper stop)", len(phases))
	}
	for _, p := range phases {
		if !p.verdict {
			bad("no verdict after the %s, or it was not as announced", p.name)
		}
	}
	if !strings.Contains(out, "sessions lost:") {
		bad("the summary does not say which sessions were lost")
	}
	if !finished {
		bad(`no "demo finished"`)
	}
	return problems
}

func sessionOf(msg string) string {
	if m := sessionOfRe.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

func isZero(hex string) bool {
	n, err := strconv.ParseUint(strings.TrimPrefix(hex, "0x"), 16, 64)
	return err == nil && n == 0
}

func withoutEnv(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
