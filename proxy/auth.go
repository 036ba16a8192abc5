package proxy

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// TokenHeader is the request header that carries the proxy's own token
// (Config.AuthToken). Clients may send the token as
// "Proxy-Authorization: Bearer <token>" instead. The provider's
// credential stays where the provider wants it (Authorization, x-api-key):
// the proxy never looks for its token there, so OAuth clients keep
// working. Neither header is forwarded upstream.
const TokenHeader = "X-Compact-Token"

// MinAuthTokenLen is the shortest Config.AuthToken accepted, in bytes.
const MinAuthTokenLen = 16

// queryCredentials are the query parameters that carry a provider key for
// the APIs that take one in the URL (Gemini's key=, some gateways' api_key=).
var queryCredentials = []string{"key", "api-key", "api_key", "apikey"}

// checkAuthToken tells why a token cannot be used, nil when it can.
func checkAuthToken(tok string) error {
	if len(tok) < MinAuthTokenLen {
		return fmt.Errorf("auth token: %d bytes, want at least %d", len(tok), MinAuthTokenLen)
	}
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c <= ' ' || c == 0x7f {
			return fmt.Errorf("auth token: byte %d is a space or control character; a header cannot carry it", i+1)
		}
	}
	return nil
}

// presentedToken returns the proxy token r carries: X-Compact-Token, or
// the credentials of a Proxy-Authorization header of scheme Bearer.
func presentedToken(r *http.Request) (string, bool) {
	if v := r.Header.Get(TokenHeader); v != "" {
		return strings.TrimSpace(v), true
	}
	scheme, cred, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Proxy-Authorization")), " ")
	if ok && strings.EqualFold(scheme, "bearer") {
		return strings.TrimSpace(cred), true
	}
	return "", false
}

// authorized reports whether r may use the proxy: always when no token is
// configured, otherwise when it presents the token. The comparison takes
// the same time whatever the presented value.
func (s *Server) authorized(r *http.Request) bool {
	if !s.authOn {
		return true
	}
	tok, ok := presentedToken(r)
	sum := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(sum[:], s.authSum[:]) == 1 && ok
}

// refuseUnauthorized answers a request without the proxy token: 401 with
// an error body in the shape of the API its path belongs to.
func (s *Server) refuseUnauthorized(w http.ResponseWriter, r *http.Request) {
	api, _ := route(r)
	typ := "invalid_request_error"
	if api == Anthropic {
		typ = "authentication_error"
	}
	s.metrics.request(api, http.StatusUnauthorized)
	s.log.Info("request", "api", api, "path", r.URL.Path, "status", http.StatusUnauthorized, "decision", "refused (proxy token missing or wrong)")
	w.Header().Set("WWW-Authenticate", `Bearer realm="compact proxy"`)
	writeError(w, api, http.StatusUnauthorized, typ,
		"compact proxy: this proxy needs its own token in the "+TokenHeader+" header (or Proxy-Authorization: Bearer); the provider key stays in its usual header")
}

// withoutOwnHeaders returns r without the headers meant for the proxy
// alone (its token, the tenant header), so that they never reach the
// upstream or a summary call. r itself is not modified.
func (s *Server) withoutOwnHeaders(r *http.Request) *http.Request {
	_, tok := r.Header[TokenHeader]
	_, ten := r.Header[s.tenantHeader]
	if !tok && !(ten && s.tenantHeader != "") {
		return r
	}
	r2 := new(http.Request)
	*r2 = *r
	r2.Header = r.Header.Clone()
	r2.Header.Del(TokenHeader)
	if s.tenantHeader != "" {
		r2.Header.Del(s.tenantHeader)
	}
	return r2
}

// tenantKey is the context key of the tenant a request named in
// Config.TenantHeader (see withTenant).
type tenantKey struct{}

// withTenant moves the tenant r names in Config.TenantHeader into its
// context, where namespace finds it once the header itself is gone (see
// withoutOwnHeaders). It returns r and "" when there is none.
func (s *Server) withTenant(r *http.Request) (*http.Request, string) {
	if s.tenantHeader == "" {
		return r, ""
	}
	t := strings.TrimSpace(r.Header.Get(s.tenantHeader))
	if t == "" {
		return r, ""
	}
	return r.WithContext(context.WithValue(r.Context(), tenantKey{}, t)), t
}

// tenantOf returns the tenant withTenant found, "" for none.
func tenantOf(r *http.Request) string {
	t, _ := r.Context().Value(tenantKey{}).(string)
	return t
}

// hasCredential reports whether a request names who pays for it: a
// provider credential in a header (see credential) or in the query
// string, or a tenant in Config.TenantHeader. Requests without one are
// passed through unread: the upstream refuses them anyway, and the proxy
// must not compact or store anything on their behalf.
func (s *Server) hasCredential(r *http.Request, tenant string) bool {
	return credential(r.Header) != "" || queryCredential(r.URL) != "" || tenant != ""
}

// queryCredential returns the provider key in u's query string, "" when
// there is none. It only ever enters a hash.
func queryCredential(u *url.URL) string {
	if u.RawQuery == "" {
		return ""
	}
	q := u.Query()
	var parts []string
	for _, name := range queryCredentials {
		for _, v := range q[name] {
			if v != "" {
				parts = append(parts, name+"="+v)
			}
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, "&")
}

// namespace returns what keys a request's conversations besides its
// header credential and session id: the upstream, then the query-string
// credential and the tenant when there are any. Two tenants whose
// credential is not in a header (a key in the URL, a gateway that adds the
// key behind the proxy and names the tenant in Config.TenantHeader) thus
// never share conversations.
func (s *Server) namespace(api API, r *http.Request) string {
	ns := s.upstreamFor(api).String()
	if q := queryCredential(r.URL); q != "" {
		ns += "\x00query " + q
	}
	if t := tenantOf(r); t != "" {
		ns += "\x00tenant " + t
	}
	return ns
}
