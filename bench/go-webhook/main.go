// Command go-webhook is a minimal Kubernetes admission webhook on net/http: the baseline that
// bench/webhook-load.sh measures topoguard against. It does what any real webhook does per
// request (read the body with a limit, decode the AdmissionReview, scan the object, answer with
// the request's uid) and allows everything. Standard library only.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log"
	"net/http"
	"time"
)

// The API server sends at most 3 MiB of object; leave room for the review around it.
const maxBodyBytes = 4 << 20

type admissionReview struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Request    *admissionRequest `json:"request"`
}

type admissionRequest struct {
	UID string `json:"uid"`
	// Kept raw, but decoding still scans and validates all of it, as every webhook must.
	Object json.RawMessage `json:"object"`
}

type admissionResponse struct {
	UID     string `json:"uid"`
	Allowed bool   `json:"allowed"`
}

type responseReview struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Response   admissionResponse `json:"response"`
}

func review(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "only POST is allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, "reading request body: "+err.Error(), http.StatusBadRequest)
		}
		return
	}
	var in admissionReview
	if err := json.Unmarshal(body, &in); err != nil {
		http.Error(w, "invalid AdmissionReview: "+err.Error(), http.StatusBadRequest)
		return
	}
	if in.Request == nil || in.Request.UID == "" {
		http.Error(w, "invalid AdmissionReview: no request.uid", http.StatusBadRequest)
		return
	}
	out := responseReview{
		APIVersion: "admission.k8s.io/v1",
		Kind:       "AdmissionReview",
		Response:   admissionResponse{UID: in.Request.UID, Allowed: true},
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(out); err != nil {
		log.Printf("writing response: %v", err)
	}
}

func main() {
	certFile := flag.String("tls-cert", "", "server certificate chain (PEM)")
	keyFile := flag.String("tls-key", "", "server private key (PEM)")
	listen := flag.String("listen", "127.0.0.1:8443", "address to serve HTTPS on")
	flag.Parse()
	if *certFile == "" || *keyFile == "" {
		log.Fatal("--tls-cert and --tls-key are required")
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/mutate", review)
	mux.HandleFunc("/validate", review)
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	server := &http.Server{
		Addr:              *listen,
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       5 * time.Minute,
	}
	log.Printf("serving on https://%s", *listen)
	log.Fatal(server.ListenAndServeTLS(*certFile, *keyFile))
}
