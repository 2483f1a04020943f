package discovery

// SnapshotsMade returns how many sorted lists s has made (tests: lists are
// made on demand, not per event).
func SnapshotsMade(s *ServiceCache) int64 { return s.builds.Load() }
