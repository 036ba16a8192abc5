package proxy

// MemStoreRaw returns the bytes s keeps for key, nil when none: for
// storetest.RunAuth, from the external test package.
func MemStoreRaw(s *MemStore, key string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byKey[key]; ok {
		return append([]byte(nil), el.Value.(*memEntry).val...)
	}
	return nil
}

// SetMemStoreRaw replaces the bytes s keeps for key.
func SetMemStoreRaw(s *MemStore, key string, val []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putLocked(key, val, s.now())
}
