package connstate

import "testing"

func TestStateString(t *testing.T) {
	tests := []struct {
		s    State
		want string
		conn bool
	}{
		{Connected, "Connected", true},
		{Suspended, "Suspended", false},
		{Reconnected, "Reconnected", true},
		{Lost, "Lost", false},
		{ReadOnly, "ReadOnly", true},
		{0, "State(0)", false},
		{42, "State(42)", false},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.s.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if got := tt.s.IsConnected(); got != tt.conn {
				t.Errorf("IsConnected() = %v, want %v", got, tt.conn)
			}
		})
	}
}

func TestErrorPolicies(t *testing.T) {
	tests := []struct {
		s                 State
		standard, session bool
	}{
		{Connected, false, false},
		{Suspended, true, false},
		{Reconnected, false, false},
		{Lost, true, true},
		{ReadOnly, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.s.String(), func(t *testing.T) {
			if got := (StandardPolicy{}).IsError(tt.s); got != tt.standard {
				t.Errorf("StandardPolicy.IsError = %v, want %v", got, tt.standard)
			}
			if got := (SessionPolicy{}).IsError(tt.s); got != tt.session {
				t.Errorf("SessionPolicy.IsError = %v, want %v", got, tt.session)
			}
		})
	}
}
