package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/schema"
)

type keygenOptions struct {
	io         *IO
	out        string
	noPassword bool
}

func newKeygenCmd(io *IO) *cobra.Command {
	o := &keygenOptions{io: io}
	cmd := &cobra.Command{
		Use:   "keygen --out PREFIX",
		Short: "Make a signing key pair (ECDSA P-256, cosign-compatible)",
		Long: `keygen writes PREFIX.key, an ECDSA P-256 private key encrypted in cosign's
"ENCRYPTED SIGSTORE PRIVATE KEY" format (scrypt + secretbox), and PREFIX.pub,
the public key as PEM. The password comes from BENCHSEAL_PASSWORD, else from a
prompt when standard input is a terminal. With neither, keygen refuses (exit
2, nothing written) unless --no-password says an empty password is intended
(the key is still encrypted, as cosign does). An empty password is said on
standard error: a warning when nothing was typed at the prompt, a plain note
with --no-password. Keys made by 'cosign generate-key-pair' work with
benchseal too. Existing files are never overwritten.`,
		Example: `  BENCHSEAL_PASSWORD=secret benchseal keygen --out publisher
  benchseal pack run --out run.tar --key publisher.key`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error { return runKeygen(cmd.Context(), o) },
	}
	cmd.Flags().StringVar(&o.out, "out", "", "path prefix of the key files (required)")
	cmd.Flags().BoolVar(&o.noPassword, "no-password", false, "an empty password is intended: without it keygen refuses when BENCHSEAL_PASSWORD is unset and there is no terminal")
	cmd.MarkFlagRequired("out")
	return cmd
}

func runKeygen(ctx context.Context, o *keygenOptions) error {
	keyPath, pubPath := o.out+".key", o.out+".pub"
	for _, p := range []string{keyPath, pubPath} {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("keygen: %s already exists (refusing to overwrite)", p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	pw, src, err := readPassword(o.io, true)
	if err != nil {
		return err
	}
	if len(pw) == 0 && src == fromNoPrompt && !o.noPassword {
		// Nobody chose the empty password (a script or CI job without the
		// variable): refuse, so an unprotected signing key is never made
		// by omission.
		return usagef("keygen: BENCHSEAL_PASSWORD is unset and there is no terminal to ask on: set BENCHSEAL_PASSWORD, or pass --no-password to make a key with an empty password; nothing was written")
	}
	if len(pw) == 0 {
		fmt.Fprintln(o.io.ErrOut, emptyPasswordNote(keyPath, src, o.noPassword))
	}
	priv, pub, err := artifact.GenerateKey(pw)
	if err != nil {
		return err
	}
	if err := schema.WriteFileAtomic(pubPath, pub, 0o644); err != nil {
		return err
	}
	if err := schema.WriteFileAtomic(keyPath, priv, 0o600); err != nil {
		os.Remove(pubPath)
		return err
	}
	k, err := artifact.ParsePublicKey(pub)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.io.Out, "wrote %s and %s\nfingerprint %s\n", keyPath, pubPath, k.Fingerprint())
	return nil
}

// passwordSource says where readPassword took the password from.
type passwordSource int

const (
	fromEnv      passwordSource = iota // BENCHSEAL_PASSWORD
	fromPrompt                         // typed at the terminal
	fromNoPrompt                       // neither: no variable, no terminal
)

// emptyPasswordNote is keygen's stderr line for a key encrypted with an
// empty password: a warning naming why it is empty and how to give one,
// or, with --no-password, a plain statement that it was intended.
func emptyPasswordNote(keyPath string, src passwordSource, intended bool) string {
	if intended {
		return fmt.Sprintf("benchseal: %s is encrypted with an empty password (--no-password): anyone who reads the file can sign with it", keyPath)
	}
	why := "BENCHSEAL_PASSWORD is unset and there is no terminal to ask on"
	if src == fromPrompt {
		why = "nothing was typed at the prompt"
	}
	return fmt.Sprintf("benchseal: WARNING: %s is encrypted with an EMPTY password (%s): anyone who reads the file can sign with it; set BENCHSEAL_PASSWORD, or pass --no-password to say this is intended", keyPath, why)
}

// readPassword returns the key password and where it came from:
// BENCHSEAL_PASSWORD when set and non-empty, else a prompt when standard
// input is a terminal (confirmed twice for a new key), else empty.
func readPassword(io *IO, confirm bool) ([]byte, passwordSource, error) {
	ctx := io.context()
	if pw := io.Getenv("BENCHSEAL_PASSWORD"); pw != "" {
		return []byte(pw), fromEnv, nil
	}
	f, ok := io.In.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return []byte{}, fromNoPrompt, nil
	}
	fmt.Fprint(io.ErrOut, "Enter password for private key: ")
	pw, err := promptPassword(ctx, int(f.Fd()))
	fmt.Fprintln(io.ErrOut)
	if err != nil {
		return nil, fromPrompt, fmt.Errorf("read password: %w", err)
	}
	if confirm {
		fmt.Fprint(io.ErrOut, "Enter password for private key again: ")
		again, err := promptPassword(ctx, int(f.Fd()))
		fmt.Fprintln(io.ErrOut)
		if err != nil {
			return nil, fromPrompt, fmt.Errorf("read password: %w", err)
		}
		if string(again) != string(pw) {
			return nil, fromPrompt, errors.New("passwords do not match")
		}
	}
	return pw, fromPrompt, nil
}

// promptPassword reads a password from the terminal fd without echo. A
// cancelled ctx (SIGINT, SIGTERM) ends the prompt at once, with the
// terminal's echo restored.
func promptPassword(ctx context.Context, fd int) ([]byte, error) {
	state, err := term.GetState(fd)
	if err != nil {
		return nil, err
	}
	type result struct {
		pw  []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		pw, err := term.ReadPassword(fd)
		ch <- result{pw, err}
	}()
	select {
	case r := <-ch:
		return r.pw, r.err
	case <-ctx.Done():
		term.Restore(fd, state)
		return nil, context.Cause(ctx)
	}
}

// loadSigner reads a private key file (benchseal's or cosign's).
func loadSigner(io *IO, path string) (*artifact.Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if bytes.Contains(b, []byte("PUBLIC KEY-----")) && !bytes.Contains(b, []byte("PRIVATE KEY-----")) {
		return nil, usagef("--key %s is a public key: signing takes the private key (%s.key, written beside it by keygen)", path, strings.TrimSuffix(path, filepath.Ext(path)))
	}
	pw, _, err := readPassword(io, false)
	if err != nil {
		return nil, err
	}
	s, err := artifact.LoadPrivateKey(b, pw)
	if err != nil {
		if errors.Is(err, artifact.ErrKeyNotOpened) {
			src := "BENCHSEAL_PASSWORD is set, and its value did not open it"
			if io.Getenv("BENCHSEAL_PASSWORD") == "" {
				src = "BENCHSEAL_PASSWORD is unset, so the empty password (or the one typed at the prompt) was tried"
			}
			return nil, fmt.Errorf("%s: %w (%s)", path, err, src)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
