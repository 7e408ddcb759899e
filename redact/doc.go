// Package redact finds credentials in text (Authorization headers, Bearer
// tokens, api_key/token/secret/password fields, and key formats such as
// OpenAI's sk-…, Hugging Face's hf_…, NVIDIA's nvapi-…, GitHub's ghp_…,
// AWS's AKIA…) and replaces them, so that files kept in a run or bundle do
// not publish them.
package redact
