package console

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// tokenCookie carries the token after the first request with it in the
// URL, so that links and the event stream need not repeat it.
const tokenCookie = "gocurator_ui_token"

// tokenOf returns the token a request carries: in the query, in the
// Authorization header (Bearer) or in the cookie.
func tokenOf(r *http.Request) (tok string, fromQuery bool) {
	if t := r.URL.Query().Get("token"); t != "" {
		return t, true
	}
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		return strings.TrimPrefix(h, "Bearer "), false
	}
	if c, err := r.Cookie(tokenCookie); err == nil {
		return c.Value, false
	}
	return "", false
}

// tokenHolder reports whether r carries the console's token.
func (s *Console) tokenHolder(r *http.Request) bool {
	if s.o.Token == "" {
		return false
	}
	t, _ := tokenOf(r)
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.o.Token)) == 1
}

// Handler returns the console behind its access checks: the handler to
// serve. On a loopback listener (RequireToken false) it refuses requests
// whose Host is not a loopback name (a DNS rebinding page would send its
// own); with RequireToken, requests without the token. A token in a
// page's URL is moved to a cookie (HttpOnly, SameSite=Strict) and the page
// reloaded without it.
func (s *Console) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
		if !s.o.RequireToken && !loopbackHost(r.Host) {
			s.refuse(w, r, http.StatusForbidden, fmt.Sprintf("host %q refused: this console listens on loopback only (use 127.0.0.1 or localhost)", r.Host))
			return
		}
		holder := s.tokenHolder(r)
		t, fromQuery := tokenOf(r)
		if s.o.RequireToken && !holder {
			msg := "this console needs its access token: open the URL gocurator ui printed (it ends in ?token=...)"
			if t != "" {
				msg = "wrong access token: open the URL gocurator ui printed"
			}
			s.refuse(w, r, http.StatusUnauthorized, msg)
			return
		}
		if holder && fromQuery {
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") && r.URL.Path != "/events" {
				// A page: the token leaves the address bar (and the
				// history, and a shared screenshot) once it is in the
				// cookie.
				q := r.URL.Query()
				q.Del("token")
				u := *r.URL
				u.RawQuery = q.Encode()
				http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
				return
			}
		}
		s.ServeHTTP(w, r)
	})
}

// refuse answers a refused request: JSON for the API, a page otherwise.
func (s *Console) refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	if strings.HasPrefix(r.URL.Path, "/api/") || r.URL.Path == "/events" {
		s.apiError(w, code, msg)
		return
	}
	s.pageError(w, r, code, msg)
}

// loopbackHost reports whether a Host header names the loopback
// interface.
func loopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether the listen address addr (host:port) is on
// loopback only: an empty host or 0.0.0.0 listens on every interface.
func IsLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "" {
		return false, nil
	}
	return loopbackHost(host), nil
}

func urlQuery(s string) string { return url.QueryEscape(s) }
