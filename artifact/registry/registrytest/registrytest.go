package registrytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Fake is a minimal in-memory OCI distribution server for tests:
// blob upload (POST + monolithic PUT), blob and manifest HEAD/GET/PUT/DELETE,
// and, when referrersAPI is set, GET /v2/<name>/referrers/<digest> with the
// OCI-Subject header on manifest PUT. It keeps one repository namespace per
// name. Tests alter blobs and manifests directly to simulate a hostile or
// corrupt registry.
type Fake struct {
	mu           sync.Mutex
	referrersAPI bool
	// Chunked serves bodies without Content-Length, so only the client's
	// own size checks apply. Set it before the client starts.
	Chunked   bool
	blobs     map[string][]byte // name@digest
	manifests map[string][]byte // name@digest
	types     map[string]string // name@digest -> media type
	tags      map[string]string // name:tag -> digest
	uploads   int
}

// NewFake starts a Fake on 127.0.0.1 (closed when the test ends) and
// returns it with its host:port.
func NewFake(t testing.TB, referrersAPI bool) (*Fake, string) {
	f := &Fake{
		referrersAPI: referrersAPI,
		blobs:        map[string][]byte{},
		manifests:    map[string][]byte{},
		types:        map[string]string{},
		tags:         map[string]string{},
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, strings.TrimPrefix(srv.URL, "http://")
}

// ServeHTTP serves the distribution API.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := r.URL.Path
	if p == "/v2/" || p == "/v2" {
		w.WriteHeader(http.StatusOK)
		return
	}
	p = strings.TrimPrefix(p, "/v2/")
	for _, kind := range []string{"/blobs/uploads/", "/blobs/", "/manifests/", "/referrers/"} {
		i := strings.LastIndex(p, kind)
		if i < 0 {
			continue
		}
		name, rest := p[:i], p[i+len(kind):]
		switch kind {
		case "/blobs/uploads/":
			f.upload(w, r, name, rest)
		case "/blobs/":
			f.blob(w, r, name, rest)
		case "/manifests/":
			f.manifest(w, r, name, rest)
		case "/referrers/":
			f.referrers(w, r, name, rest)
		}
		return
	}
	http.NotFound(w, r)
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request, mediaType string, d string, body []byte) {
	w.Header().Set("Content-Type", mediaType)
	w.Header().Set("Docker-Content-Digest", d)
	if f.Chunked && r.Method == http.MethodGet {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		w.Write(body)
		return
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		w.Write(body)
	}
}

func (f *Fake) upload(w http.ResponseWriter, r *http.Request, name, id string) {
	switch r.Method {
	case http.MethodPost:
		f.uploads++
		w.Header().Set("Location", fmt.Sprintf("/v2/%s/blobs/uploads/u%d", name, f.uploads))
		w.WriteHeader(http.StatusAccepted)
	case http.MethodPut:
		d := r.URL.Query().Get("digest")
		body, err := io.ReadAll(r.Body)
		if err != nil || digest.FromBytes(body).String() != d {
			http.Error(w, "digest mismatch", http.StatusBadRequest)
			return
		}
		f.blobs[name+"@"+d] = body
		w.Header().Set("Docker-Content-Digest", d)
		w.WriteHeader(http.StatusCreated)
	default:
		http.Error(w, "method", http.StatusMethodNotAllowed)
	}
}

func (f *Fake) blob(w http.ResponseWriter, r *http.Request, name, d string) {
	body, ok := f.blobs[name+"@"+d]
	if !ok {
		http.NotFound(w, r)
		return
	}
	f.serve(w, r, "application/octet-stream", d, body)
}

func (f *Fake) manifest(w http.ResponseWriter, r *http.Request, name, ref string) {
	d := ref
	if !strings.HasPrefix(ref, "sha256:") {
		d = f.tags[name+":"+ref]
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		body, ok := f.manifests[name+"@"+d]
		if !ok {
			http.NotFound(w, r)
			return
		}
		f.serve(w, r, f.types[name+"@"+d], d, body)
	case http.MethodPut:
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		d = digest.FromBytes(body).String()
		if strings.HasPrefix(ref, "sha256:") && ref != d {
			http.Error(w, "digest mismatch", http.StatusBadRequest)
			return
		}
		f.manifests[name+"@"+d] = body
		f.types[name+"@"+d] = r.Header.Get("Content-Type")
		if !strings.HasPrefix(ref, "sha256:") {
			f.tags[name+":"+ref] = d
		}
		var m struct {
			Subject *ocispec.Descriptor `json:"subject"`
		}
		if f.referrersAPI && json.Unmarshal(body, &m) == nil && m.Subject != nil {
			w.Header().Set("OCI-Subject", m.Subject.Digest.String())
		}
		w.Header().Set("Docker-Content-Digest", d)
		w.WriteHeader(http.StatusCreated)
	case http.MethodDelete:
		delete(f.manifests, name+"@"+d)
		w.WriteHeader(http.StatusAccepted)
	default:
		http.Error(w, "method", http.StatusMethodNotAllowed)
	}
}

func (f *Fake) referrers(w http.ResponseWriter, r *http.Request, name, d string) {
	if !f.referrersAPI {
		http.NotFound(w, r)
		return
	}
	idx := ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex, Manifests: []ocispec.Descriptor{}}
	for k, body := range f.manifests {
		if !strings.HasPrefix(k, name+"@") {
			continue
		}
		var m ocispec.Manifest
		if json.Unmarshal(body, &m) != nil || m.Subject == nil || m.Subject.Digest.String() != d {
			continue
		}
		idx.Manifests = append(idx.Manifests, ocispec.Descriptor{
			MediaType: f.types[k], ArtifactType: m.ArtifactType, Annotations: m.Annotations,
			Digest: digest.FromBytes(body), Size: int64(len(body)),
		})
	}
	b, _ := json.Marshal(idx)
	w.Header().Set("Content-Type", ocispec.MediaTypeImageIndex)
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// SetBlob replaces the stored bytes of a blob.
func (f *Fake) SetBlob(name string, d digest.Digest, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.blobs[name+"@"+d.String()] = body
}

// PutManifest stores a manifest and tags it.
func (f *Fake) PutManifest(name, tag string, body []byte) digest.Digest {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := digest.FromBytes(body)
	f.manifests[name+"@"+d.String()] = body
	f.types[name+"@"+d.String()] = ocispec.MediaTypeImageManifest
	f.tags[name+":"+tag] = d.String()
	return d
}

// Blob returns a copy of the stored bytes of a blob.
func (f *Fake) Blob(name string, d digest.Digest) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return bytes.Clone(f.blobs[name+"@"+d.String()])
}
