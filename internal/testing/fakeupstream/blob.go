package fakeupstream

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// credential names the key a request authenticated with: the first 16 hex
// digits of the SHA-256 of its x-api-key, api-key or Authorization header
// ("" when it has none). Prompt caches and compaction blobs are per
// credential, as the providers keep them per account; the key itself is
// never kept.
func credential(h http.Header) string {
	for _, k := range []string{"X-Api-Key", "Api-Key", "Authorization"} {
		if v := h.Get(k); v != "" {
			sum := sha256.Sum256([]byte(strings.TrimPrefix(v, "Bearer ")))
			return hex.EncodeToString(sum[:8])
		}
	}
	return ""
}

// seal encrypts v (as JSON) into an opaque blob that only this fake can
// open, bound to kind and cred (AES-GCM with them as additional data).
func (f *Fake) seal(kind, cred string, v any) string {
	plain, _ := json.Marshal(v) // v is always one of the fake's own types
	aead := f.aead()
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.StdEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, []byte(kind+"\x00"+cred)))
}

// errBlob is returned by open for a blob that is not this fake's, was
// sealed for another kind or credential, or was altered.
var errBlob = errors.New("blob could not be verified")

// open decrypts a blob sealed by seal with the same kind and cred into v.
func (f *Fake) open(kind, cred, blob string, v any) error {
	raw, err := base64.StdEncoding.DecodeString(blob)
	aead := f.aead()
	if err != nil || len(raw) < aead.NonceSize() {
		return errBlob
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(kind+"\x00"+cred))
	if err != nil || json.Unmarshal(plain, v) != nil {
		return errBlob
	}
	return nil
}

func (f *Fake) aead() cipher.AEAD {
	block, err := aes.NewCipher(f.key[:])
	if err != nil {
		panic("fakeupstream: " + err.Error()) // a 32-byte key always makes a cipher
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("fakeupstream: " + err.Error())
	}
	return aead
}

// newKey returns a random key for a new Fake: each Fake is a provider of
// its own, whose signatures and blobs no other Fake accepts.
func newKey() [32]byte {
	var k [32]byte
	_, _ = rand.Read(k[:])
	return k
}
