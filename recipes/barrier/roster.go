package barrier

// roster is what a member knows of the barrier's member nodes: by name, the
// node's czxid, or 0 for a node known to be made before the ready node that
// let us in (of our round) whose czxid was not read. Reading every member's Stat at every look would cost a
// request per member and a round trip after the listing; the roster is
// filled by Enter from what its looks showed, and by Leave's reads of the
// names it did not know, once each.
//
// A name stands for one node: ours and Curator's are random UUIDs, ours new
// at every Enter. A Curator member enters again under its old name, so a
// name taken for the round may by now be a node of the next one; Leave
// finds that out when it waits for that node (waitGone reads its czxid) and
// corrects the roster, so a wrong "in" costs a look, never a wrong return.
type roster struct {
	czxid   map[string]int64 // known names: czxid, 0 if only known to be of our round
	unknown []string         // names seen whose age is not known: Leave's first look reads them
}

// reset empties r for a new Enter.
func (r *roster) reset() {
	r.czxid = map[string]int64{}
	r.unknown = r.unknown[:0]
}

// learn records what a listing of the barrier taken at or after our node's
// creation says once the barrier has opened for us at the ready node made
// at opened: a listing older than that ready node (its pzxid, the zxid of
// the last change of the children, is less) holds only nodes made before
// it, members of our round; from a later listing, the names not known yet
// are read by Leave.
func (r *roster) learn(l round, opened int64) {
	if l.pstat == nil {
		return
	}
	older := l.pstat.Pzxid < opened
	for _, m := range l.members {
		switch _, known := r.czxid[m]; {
		case known:
		case older:
			r.czxid[m] = 0
		default:
			r.unknown = append(r.unknown, m)
		}
	}
}

// of reports whether the node named m is of the round the ready node made at
// opened let us into; false if its age is not known.
func (r *roster) of(m string, opened int64) bool {
	c, ok := r.czxid[m]
	return ok && c < opened
}
